package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"
)

// The -o formats of get and of the mutating sub-commands.
const (
	outputTable = "table"
	outputJSON  = "json"
	outputYAML  = "yaml"
)

// addOutputFlag registers -o/--output on cmd.
func addOutputFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVarP(p, "output", "o", outputTable, "output format: table, json or yaml")
}

// checkOutput validates an -o value.
func checkOutput(o string) error {
	switch o {
	case outputTable, outputJSON, outputYAML:
		return nil
	}
	return fmt.Errorf("unknown output format %q: use table, json or yaml", o)
}

// writeData writes v as indented JSON or as YAML. The JSON keeps <, > and
// & as they are (a redacted value reads "<redacted N bytes>", not
// "\u003credacted N bytes\u003e").
func writeData(w io.Writer, format string, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil { // ends with a newline
		return err
	}
	b := buf.Bytes()
	if format == outputYAML {
		var err error
		if b, err = yaml.JSONToYAML(b); err != nil {
			return err
		}
	}
	_, err := w.Write(b)
	return err
}

// table writes aligned columns; the header is upper case.
type table struct {
	tw *tabwriter.Writer
}

func newTable(w io.Writer, header ...string) *table {
	t := &table{tw: tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)}
	t.row(header...)
	return t
}

func (t *table) row(cells ...string) {
	for i, c := range cells {
		if c == "" {
			cells[i] = "-"
		}
	}
	fmt.Fprintln(t.tw, strings.Join(cells, "\t"))
}

func (t *table) flush() error { return t.tw.Flush() }
