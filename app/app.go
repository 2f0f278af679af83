// Package app is the Fyne wizard. It is the only package that imports Fyne.
package app

import (
	"context"
	"fmt"

	"fyne.io/fyne/v2"
	fyneapp "fyne.io/fyne/v2/app"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	_ "gpuwizard/app/internal/localefix" // before Fyne reads the locale
)

// Run opens the main window and blocks until it is closed.
func Run(ctx context.Context) error {
	a := fyneapp.NewWithID("io.gpuwizard.app")
	w := a.NewWindow("gpuwizard")
	w.SetContent(container.NewVBox(widget.NewLabel(fmt.Sprintf("gpuwizard"))))
	w.Resize(fyne.NewSize(900, 600))
	w.ShowAndRun()
	return nil
}
