// Command winres writes the Windows resources of gpuwizard's two programs:
// the application icon (an .ico of PNG images at the sizes Windows asks
// for, made from assets/icon.png) and a resource script (.rc) with the icon
// and the version information Explorer shows (product, description,
// version, copyright). mingw's windres compiles the script into a .syso
// that `go build` links into the .exe (tools/dist-windows.sh).
//
//	go run ./tools/winres -icon assets/icon.png -out build/winres -version 0.1.0.3 -product-version v0.1-3-gabc
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	icon := flag.String("icon", "assets/icon.png", "the application icon (a square PNG)")
	out := flag.String("out", "build/winres", "folder to write gpuwizard.ico and the .rc files into")
	version := flag.String("version", "0.0.0.0", "file version: four numbers a.b.c.d")
	product := flag.String("product-version", "dev", "product version as text (git describe)")
	flag.Parse()
	if err := run(*icon, *out, *version, *product); err != nil {
		fmt.Fprintln(os.Stderr, "winres:", err)
		os.Exit(1)
	}
}

func run(iconPath, out, version, product string) error {
	v, err := parseVersion(version)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	src, err := os.ReadFile(iconPath)
	if err != nil {
		return err
	}
	ico, err := makeICO(src, iconSizes)
	if err != nil {
		return fmt.Errorf("%s: %w", iconPath, err)
	}
	icoPath := filepath.Join(out, "gpuwizard.ico")
	if err := os.WriteFile(icoPath, ico, 0o644); err != nil {
		return err
	}
	for _, p := range programs {
		rc := resourceScript(p, "gpuwizard.ico", v, product)
		if err := os.WriteFile(filepath.Join(out, p.File+".rc"), []byte(rc), 0o644); err != nil {
			return err
		}
	}
	return nil
}
