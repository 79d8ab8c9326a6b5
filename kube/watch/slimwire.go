package watch

// SlimPodWire: the pods of the TUI's cache lose, before they are decoded,
// the fields SlimPod would drop after. The protobuf decoder allocates every
// env var, volume, probe and script of a KubeRay pod (~10 KB) for SlimPod
// to keep ~3 KB of it; at launch that garbage was most of the collector's
// work (docs/benchmarks.md). The transport rewrites the protobuf bytes of a
// pod LIST or WATCH of the core API, field by field (protowire), keeping a
// superset of what SlimPod keeps, which still runs on every decoded pod:
// what reaches the cache is the same either way
// (TestSlimPodWireKeepsWhatSlimPodKeeps). Anything it does not recognise
// (JSON, another kind, an envelope it cannot parse) passes unchanged.

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"mime"
	"net/http"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
)

// rewriter appends the message b, rewritten, to dst; ok is false when b is
// not a well-formed message (dst is then to be discarded).
type rewriter func(dst, b []byte) (out []byte, ok bool)

// msgFilter rewrites one protobuf message: a field whose number has a sub
// rewriter is a message rewritten by it; otherwise a field is kept when
// keep is nil or holds its number, and is not in drop.
type msgFilter struct {
	keep map[protowire.Number]bool
	drop map[protowire.Number]bool
	sub  map[protowire.Number]rewriter
}

// The field numbers of k8s.io/api/core/v1's generated.proto (v0.37) and of
// meta/v1's ObjectMeta, for what SlimPod keeps.
var (
	// Container: name 1, image 2, ports 6 (SlimPod keeps the one named
	// "metrics"), restartPolicy 24, and resources 8 while the pod is not
	// ready (slimContainers).
	wireContainer      = &msgFilter{keep: map[protowire.Number]bool{1: true, 2: true, 6: true, 8: true, 24: true}}
	wireContainerReady = &msgFilter{keep: map[protowire.Number]bool{1: true, 2: true, 6: true, 24: true}}
	// PodSpec: nodeSelector 7, serviceAccountName 8, nodeName 10,
	// affinity 18, schedulerName 19, tolerations 22, overhead 32;
	// containers 2 and initContainers 20 rewritten.
	wireSpec      = specFilter(wireContainer)
	wireSpecReady = specFilter(wireContainerReady)
	// ObjectMeta: all but managedFields 17.
	wireMeta = &msgFilter{drop: map[protowire.Number]bool{17: true}}
	// ContainerStateTerminated: all but containerID 7; ContainerState:
	// waiting 1, running 2, terminated 3 rewritten.
	wireTerminated = &msgFilter{drop: map[protowire.Number]bool{7: true}}
	wireState      = &msgFilter{sub: map[protowire.Number]rewriter{3: wireTerminated.apply}}
	// ContainerStatus: name 1, ready 4, restartCount 5, image 6, started 9;
	// state 2 and lastState 3 rewritten.
	wireContainerStatus = &msgFilter{keep: map[protowire.Number]bool{1: true, 4: true, 5: true, 6: true, 9: true},
		sub: map[protowire.Number]rewriter{2: wireState.apply, 3: wireState.apply}}
	// PodStatus: phase 1, message 3, reason 4, podIP 6; conditions 2
	// (type 1, status 2, lastTransitionTime 4, reason 5, message 6) and
	// the container statuses 8 and init container statuses 10 rewritten:
	// podview.Status.
	wireStatus = &msgFilter{keep: map[protowire.Number]bool{1: true, 3: true, 4: true, 6: true},
		sub: map[protowire.Number]rewriter{2: (&msgFilter{keep: map[protowire.Number]bool{1: true, 2: true, 4: true, 5: true, 6: true}}).apply,
			8: wireContainerStatus.apply, 10: wireContainerStatus.apply}}
	// Pod: metadata 1, spec 2 and status 3 rewritten.
	wirePodNotReady = &msgFilter{sub: map[protowire.Number]rewriter{1: wireMeta.apply, 2: wireSpec.apply, 3: wireStatus.apply}}
	wirePodReady    = &msgFilter{sub: map[protowire.Number]rewriter{1: wireMeta.apply, 2: wireSpecReady.apply, 3: wireStatus.apply}}
	// PodList: metadata 1, items 2.
	wirePodList = &msgFilter{sub: map[protowire.Number]rewriter{2: wirePod}}
)

func specFilter(c *msgFilter) *msgFilter {
	return &msgFilter{
		keep: map[protowire.Number]bool{7: true, 8: true, 10: true, 18: true, 19: true, 22: true, 32: true},
		sub:  map[protowire.Number]rewriter{2: c.apply, 20: c.apply},
	}
}

// wirePod rewrites a Pod as SlimPod trims it: the containers' resources
// only while the pod is not ready, read from its status.
func wirePod(dst, b []byte) ([]byte, bool) {
	if wireReady(b) {
		return wirePodReady.apply(dst, b)
	}
	return wirePodNotReady.apply(dst, b)
}

// wireReady is podReady on a Pod's bytes: status 3's phase 1 is Running and
// its first condition 2 of type 1 Ready has status 2 True (the last of a
// repeated scalar wins, as the decoder reads it).
func wireReady(pod []byte) bool {
	var status []byte
	eachField(pod, func(num protowire.Number, v []byte) {
		if num == 3 {
			status = v
		}
	})
	running, readySeen, ready := false, false, false
	eachField(status, func(num protowire.Number, v []byte) {
		switch num {
		case 1:
			running = string(v) == "Running"
		case 2:
			var isReady, isTrue bool
			eachField(v, func(n protowire.Number, w []byte) {
				switch n {
				case 1:
					isReady = string(w) == "Ready"
				case 2:
					isTrue = string(w) == "True"
				}
			})
			if isReady && !readySeen {
				readySeen, ready = true, isTrue
			}
		}
	})
	return running && ready
}

// eachField calls fn with every length-delimited field of the message b,
// stopping at the first malformed byte.
func eachField(b []byte, fn func(num protowire.Number, v []byte)) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return
		}
		if typ == protowire.BytesType {
			v, _ := protowire.ConsumeBytes(b[n:])
			fn(num, v)
		}
		b = b[n+m:]
	}
}

// apply appends the rewritten b to dst; ok is false when b is not a
// well-formed message (dst is then to be discarded).
func (f *msgFilter) apply(dst, b []byte) ([]byte, bool) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return dst, false
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return dst, false
		}
		field := b[:n+m]
		b = b[n+m:]
		if s := f.sub[num]; s != nil && typ == protowire.BytesType {
			v, _ := protowire.ConsumeBytes(field[n:])
			var ok bool
			if dst, ok = appendSub(dst, num, m-len(v), v, s); !ok {
				return dst, false
			}
			continue
		}
		if f.drop[num] || (f.keep != nil && !f.keep[num]) {
			continue
		}
		dst = append(dst, field...)
	}
	return dst, true
}

// appendSub appends field num, a message rewritten by rewrite from v, to
// dst without a buffer of its own: its length, at most v's, is written in
// the k bytes v's length took (a varint padded with continuation bytes,
// which protobuf decoders read as the same number).
func appendSub(dst []byte, num protowire.Number, k int, v []byte, rewrite rewriter) ([]byte, bool) {
	dst = protowire.AppendTag(dst, num, protowire.BytesType)
	at := len(dst)
	dst = append(dst, make([]byte, k)...)
	dst, ok := rewrite(dst, v)
	if !ok {
		return dst, false
	}
	l := uint64(len(dst) - at - k)
	for i := at; i < at+k-1; i++ {
		dst[i] = byte(l&0x7f) | 0x80
		l >>= 7
	}
	dst[at+k-1] = byte(l)
	return dst, true
}

// protobufMagic starts every protobuf-encoded object of the API server, a
// runtime.Unknown after it.
var protobufMagic = []byte{0x6b, 0x38, 0x73, 0x00}

// The envelopes around the pods: a runtime.Unknown (raw 2 is the object) of
// a LIST body, and a WATCH frame's metav1.WatchEvent (object 2) whose
// runtime.RawExtension (raw 1) is an encoded object.
var (
	wireUnknownPodList = &msgFilter{sub: map[protowire.Number]rewriter{2: wirePodList.apply}}
	wireUnknownPod     = &msgFilter{sub: map[protowire.Number]rewriter{2: wirePod}}
	wireWatchEvent     = &msgFilter{sub: map[protowire.Number]rewriter{2: (&msgFilter{sub: map[protowire.Number]rewriter{1: wireEncodedPod}}).apply}}
)

// slimUnknown appends to dst the runtime.Unknown b (typeMeta 1: apiVersion
// 1, kind 2; raw 2; contentEncoding 3) rewritten by f; ok is false (dst to
// be discarded) unless it holds a core/v1 object of that kind, not encoded
// further.
func slimUnknown(dst, b []byte, kind string, f *msgFilter) ([]byte, bool) {
	var isV1, isKind, encoded bool
	eachField(b, func(num protowire.Number, v []byte) {
		switch num {
		case 1:
			eachField(v, func(n protowire.Number, w []byte) {
				switch n {
				case 1:
					isV1 = string(w) == "v1"
				case 2:
					isKind = string(w) == kind
				}
			})
		case 3:
			encoded = len(v) > 0
		}
	})
	if !isV1 || !isKind || encoded {
		return dst, false
	}
	return f.apply(dst, b)
}

// wireEncodedPod rewrites an encoded object (the magic, a runtime.Unknown)
// that is a Pod; anything else fails the frame, which then passes as it
// came.
func wireEncodedPod(dst, raw []byte) ([]byte, bool) {
	if !bytes.HasPrefix(raw, protobufMagic) {
		return dst, false
	}
	return slimUnknown(append(dst, protobufMagic...), raw[len(protobufMagic):], "Pod", wireUnknownPod)
}

// slimList is a LIST response's body with its pods rewritten, or b.
func slimList(b []byte) []byte {
	if !bytes.HasPrefix(b, protobufMagic) {
		return b
	}
	out := append(make([]byte, 0, len(b)), protobufMagic...)
	out, ok := slimUnknown(out, b[len(protobufMagic):], "PodList", wireUnknownPodList)
	if !ok {
		return b
	}
	return out
}

// slimWatchEvent appends to dst one WATCH frame with its pod rewritten, or
// the frame as it came (a Status, a bookmark of another kind).
func slimWatchEvent(dst, frame []byte) []byte {
	start := len(dst)
	out, ok := wireWatchEvent.apply(dst, frame)
	if !ok {
		return append(out[:start], frame...)
	}
	return out
}

// SlimPodWire wraps the TUI cache's transport (rest.Config.Wrap) so that
// pods arrive trimmed (see the top of this file).
func SlimPodWire(rt http.RoundTripper) http.RoundTripper { return slimWire{next: rt} }

type slimWire struct{ next http.RoundTripper }

func (w slimWire) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := w.next.RoundTrip(req)
	if err != nil || req.Method != http.MethodGet || resp.StatusCode != http.StatusOK || !isPodCollection(req.URL.Path) {
		return resp, err
	}
	mt, params, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil || mt != "application/vnd.kubernetes.protobuf" {
		return resp, nil
	}
	if params["stream"] == "watch" {
		resp.Body = newSlimWatchBody(resp.Body)
		return resp, nil
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	b = slimList(b)
	resp.Body = io.NopCloser(bytes.NewReader(b))
	resp.ContentLength = int64(len(b))
	resp.Header.Del("Content-Length")
	return resp, nil
}

// isPodCollection: the core API's pods, of a namespace or of all (a
// prefix before /api, as an API proxy's, is allowed).
func isPodCollection(path string) bool {
	if strings.HasSuffix(path, "/api/v1/pods") {
		return true
	}
	before, ok := strings.CutSuffix(path, "/pods")
	if !ok {
		return false
	}
	i := strings.LastIndex(before, "/api/v1/namespaces/")
	return i >= 0 && !strings.Contains(before[i+len("/api/v1/namespaces/"):], "/")
}

// slimWatchBody rewrites a WATCH stream frame by frame (a 4-byte
// big-endian length, then a WatchEvent), as each arrives.
//
// It reads the stream through a buffer of watchReadSize: over HTTP/2 every
// read of the response body that takes 4 KB or more sends the API server a
// WINDOW_UPDATE (a TLS record and a write(2): golang.org/x/net/http2's
// inflow.add), and read a frame at a time, that is one per pod. Uncompressed
// (--disable-compression), 10,000 pods cost 0.18 s of the launch's CPU in
// those writes (docs/benchmarks.md); read 256 KB at a time, what has
// arrived is taken in one read. A read returns as soon as anything has
// arrived: an event is never held back to fill the buffer.
type slimWatchBody struct {
	src   io.ReadCloser
	in    *bufio.Reader // src, buffered
	out   []byte        // what is left to read of buf
	buf   []byte        // the last frame rewritten, with its length
	frame []byte        // the last frame read
}

func newSlimWatchBody(src io.ReadCloser) *slimWatchBody {
	return &slimWatchBody{src: src, in: bufio.NewReaderSize(src, watchReadSize)}
}

func (b *slimWatchBody) Read(p []byte) (int, error) {
	for len(b.out) == 0 {
		var hdr [4]byte
		if _, err := io.ReadFull(b.in, hdr[:]); err != nil {
			return 0, err
		}
		n := binary.BigEndian.Uint32(hdr[:])
		if cap(b.frame) < int(n) {
			b.frame = make([]byte, n)
		}
		b.frame = b.frame[:n]
		if _, err := io.ReadFull(b.in, b.frame); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
		out := slimWatchEvent(append(b.buf[:0], 0, 0, 0, 0), b.frame)
		binary.BigEndian.PutUint32(out, uint32(len(out)-4))
		b.buf, b.out = out, out
	}
	n := copy(p, b.out)
	b.out = b.out[n:]
	return n, nil
}

func (b *slimWatchBody) Close() error { return b.src.Close() }

// watchReadSize is how much of a pod WATCH stream one read takes at most.
const watchReadSize = 256 << 10
