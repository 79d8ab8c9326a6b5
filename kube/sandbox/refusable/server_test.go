package refusable

import (
	"io"
	"net/http"
	"testing"
)

func get(url string) (string, error) {
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func TestRefuseAndListenAgainOnTheSameAddress(t *testing.T) {
	s, err := Listen("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello") }))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if body, err := get(s.URL()); err != nil || body != "hello" {
		t.Fatalf("GET = %q, %v; want hello", body, err)
	}
	if err := s.SetRefuse(true); err != nil {
		t.Fatal(err)
	}
	if _, err := get(s.URL()); err == nil {
		t.Fatal("GET while refusing succeeded; want connection refused")
	}
	if err := s.SetRefuse(true); err != nil { // already refusing: nothing to do
		t.Fatal(err)
	}
	addr := s.Addr()
	if err := s.SetRefuse(false); err != nil {
		t.Fatal(err)
	}
	if s.Addr() != addr {
		t.Errorf("address changed from %s to %s", addr, s.Addr())
	}
	if body, err := get(s.URL()); err != nil || body != "hello" {
		t.Fatalf("GET after listening again = %q, %v; want hello", body, err)
	}
	s.Close()
	if _, err := get(s.URL()); err == nil {
		t.Fatal("GET after Close succeeded")
	}
	if err := s.SetRefuse(false); err != nil {
		t.Fatal(err)
	}
	if _, err := get(s.URL()); err == nil {
		t.Fatal("SetRefuse(false) after Close listened again")
	}
	s.Close() // twice is fine
}
