package main

import (
	"bytes"
	"encoding/binary"
	"image/png"
	"os"
	"strings"
	"testing"
)

// The .ico holds one PNG per size, each decodable at its size, where its
// directory entry says.
func TestICO(t *testing.T) {
	src, err := os.ReadFile("../../assets/icon.png")
	if err != nil {
		t.Fatal(err)
	}
	ico, err := makeICO(src, iconSizes)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	if le.Uint16(ico[2:]) != 1 || int(le.Uint16(ico[4:])) != len(iconSizes) {
		t.Fatalf("header % x", ico[:6])
	}
	for i, s := range iconSizes {
		e := ico[6+16*i:]
		size, at := le.Uint32(e[8:]), le.Uint32(e[12:])
		img, err := png.Decode(bytes.NewReader(ico[at : at+size]))
		if err != nil || img.Bounds().Dx() != s || img.Bounds().Dy() != s {
			t.Errorf("entry %d: %v, %v (want %dx%d)", i, err, img.Bounds(), s, s)
		}
		if w := int(e[0]); w != s%256 {
			t.Errorf("entry %d: width byte %d for %d", i, w, s)
		}
	}
	if _, err := makeICO(src[:100], iconSizes); err == nil {
		t.Error("a truncated PNG made an icon")
	}
}

func TestResourceScript(t *testing.T) {
	v, err := parseVersion("0.1.3")
	if err != nil || v != [4]uint16{0, 1, 3, 0} {
		t.Fatalf("%v %v", v, err)
	}
	for _, bad := range []string{"1.2.3.4.5", "1.x", "70000"} {
		if _, err := parseVersion(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	rc := resourceScript(programs[1], `C:\icons\"x".ico`, v, "v0.1-3-gabc")
	for _, want := range []string{`1 ICON "C:\\icons\\""x"".ico"`, "FILEVERSION 0,1,3,0", `VALUE "ProductVersion", "v0.1-3-gabc"`, `VALUE "OriginalFilename", "gpuwizard-gui.exe"`} {
		if !strings.Contains(rc, want) {
			t.Errorf("lacks %s:\n%s", want, rc)
		}
	}
}
