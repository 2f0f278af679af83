//go:build unix

package safefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestRootConfinesLinks(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "data")
	os.MkdirAll(filepath.Join(root, "cats"), 0o755)
	os.WriteFile(filepath.Join(root, "cats", "a.png"), []byte("png"), 0o644)
	secret := filepath.Join(base, "secret.txt")
	os.WriteFile(secret, []byte("secret"), 0o600)
	os.Symlink(filepath.Join(root, "cats", "a.png"), filepath.Join(root, "inside.png"))
	os.Symlink(secret, filepath.Join(root, "cats", "b.png"))
	os.Symlink("../../secret.txt", filepath.Join(root, "cats", "c.png"))
	os.Symlink(filepath.Join(base), filepath.Join(root, "up"))
	os.Symlink(filepath.Join(root, "nowhere.png"), filepath.Join(root, "dangling.png"))
	// The dataset itself reached through a link works.
	link := filepath.Join(base, "link-to-data")
	os.Symlink(root, link)
	for _, dir := range []string{root, link} {
		r, err := NewRoot(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, ok := range []string{"cats/a.png", "inside.png"} {
			if b, err := r.ReadFile(filepath.Join(dir, ok), 10, "an image"); err != nil || string(b) != "png" {
				t.Errorf("%s: %q, %v", ok, b, err)
			}
		}
		for _, out := range []string{"cats/b.png", "cats/c.png", "up/secret.txt"} {
			p := filepath.Join(dir, out)
			_, err := r.ReadFile(p, 10, "an image")
			if !errors.Is(err, ErrOutside) || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "secret.txt") {
				t.Errorf("%s: %v (want ErrOutside naming the link and its target)", out, err)
			}
			if _, _, err := r.Open(p); !errors.Is(err, ErrOutside) {
				t.Errorf("Open %s: %v", out, err)
			}
		}
		_, err = r.ReadFile(filepath.Join(dir, "dangling.png"), 10, "an image")
		if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "nowhere.png, which does not exist") {
			t.Errorf("dangling link: %v", err)
		}
	}
}

func TestOpenNoFollow(t *testing.T) {
	dir := t.TempDir()
	precious := filepath.Join(dir, "precious")
	os.WriteFile(precious, []byte("keep"), 0o644)
	link := filepath.Join(dir, ".lock")
	os.Symlink(precious, link)
	if _, err := OpenNoFollow(link, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "never writes through it") {
		t.Errorf("a link: %v", err)
	}
	if b, _ := os.ReadFile(precious); string(b) != "keep" {
		t.Errorf("the link's target changed: %q", b)
	}
	fifo := filepath.Join(dir, "fifo")
	syscall.Mkfifo(fifo, 0o644)
	if _, err := OpenNoFollow(fifo, os.O_RDONLY, 0); !errors.Is(err, ErrNotRegular) {
		t.Errorf("a FIFO: %v", err)
	}
	f, err := OpenNoFollow(filepath.Join(dir, "new"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
}
