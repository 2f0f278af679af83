package app

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"
)

// column is one column of a textTable: its header and width.
type column struct {
	title string
	width float32
}

// textTable is a table of one-line labels (cut with an ellipsis) under a
// bold header row: rows says how many rows there are now, cell the text of
// one. The Runs view and the Watch tab list with it.
func textTable(cols []column, rows func() int, cell func(row, col int) string) *widget.Table {
	t := widget.NewTableWithHeaders(
		func() (int, int) { return rows(), len(cols) },
		func() fyne.CanvasObject {
			l := widget.NewLabel("")
			l.Truncation = fyne.TextTruncateEllipsis
			return l
		},
		func(id widget.TableCellID, o fyne.CanvasObject) {
			if id.Row < rows() {
				o.(*widget.Label).SetText(cell(id.Row, id.Col))
			}
		})
	t.ShowHeaderColumn = false
	t.CreateHeader = func() fyne.CanvasObject {
		return widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	}
	t.UpdateHeader = func(id widget.TableCellID, o fyne.CanvasObject) {
		if id.Col >= 0 && id.Col < len(cols) {
			o.(*widget.Label).SetText(cols[id.Col].title)
		}
	}
	for i, c := range cols {
		t.SetColumnWidth(i, c.width)
	}
	return t
}
