package tuitest

import tea "charm.land/bubbletea/v2"

// MaxFuzzKeys bounds the keys of one fuzz input. Each key renders a whole
// frame, so thousands of them took seconds per input (a CI run's FuzzPrompt
// worker, ~8,000 typed bytes, was taken for hung under load); no dialog or
// prompt needs more keys than a few screen lines to reach any state.
const MaxFuzzKeys = 512

// FuzzKeys turns fuzz text into key presses (the first MaxFuzzKeys): a few
// control bytes stand for the keys dialogs and prompts react to, every other
// rune is typed.
func FuzzKeys(s string) []tea.KeyPressMsg {
	var out []tea.KeyPressMsg
	for _, r := range s {
		if len(out) == MaxFuzzKeys {
			break
		}
		var k tea.KeyPressMsg
		switch r {
		case '\t':
			k = tea.KeyPressMsg{Code: tea.KeyTab}
		case '\r', '\n':
			k = tea.KeyPressMsg{Code: tea.KeyEnter}
		case 0x1b:
			k = tea.KeyPressMsg{Code: tea.KeyEscape}
		case 0x7f:
			k = tea.KeyPressMsg{Code: tea.KeyBackspace}
		case 0x15:
			k = tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl}
		case 0x17:
			k = tea.KeyPressMsg{Code: 'w', Mod: tea.ModCtrl}
		case 0x01:
			k = tea.KeyPressMsg{Code: tea.KeyUp}
		case 0x02:
			k = tea.KeyPressMsg{Code: tea.KeyDown}
		case 0x03:
			k = tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
		case 0x04:
			k = tea.KeyPressMsg{Code: tea.KeyLeft}
		case 0x05:
			k = tea.KeyPressMsg{Code: tea.KeyRight}
		default:
			k = tea.KeyPressMsg{Code: r, Text: string(r)}
		}
		out = append(out, k)
	}
	return out
}
