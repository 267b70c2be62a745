package main

import (
	"fmt"
	"image/color"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// palette colours the ranks (Okabe–Ito, readable for colour-blind eyes).
var palette = []color.RGBA{
	{0, 114, 178, 255}, {230, 159, 0, 255}, {0, 158, 115, 255}, {204, 121, 167, 255},
	{86, 180, 233, 255}, {213, 94, 0, 255}, {240, 228, 66, 255}, {0, 0, 0, 255},
}

// bars is a plot.Plotter drawing one bar per batch on its (rank, slot)
// row; row 0 is at the top.
type bars struct {
	rec  *record
	rows map[[2]int]float64
	n    int
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func (b bars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	outline := draw.LineStyle{Color: color.White, Width: vg.Points(0.5)}
	label := text.Style{Color: color.White, Font: font.From(plot.DefaultFont, 7), XAlign: draw.XCenter, YAlign: draw.YCenter, Handler: p.TextHandler}
	for _, sp := range b.rec.Spans {
		y := b.rows[[2]int{sp.Rank, sp.Slot}]
		x0, x1 := trX(ms(sp.Begin)), trX(ms(sp.End))
		y0, y1 := trY(y-0.38), trY(y+0.38)
		box := []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
		c.FillPolygon(palette[sp.Rank%len(palette)], c.ClipPolygonXY(box))
		c.StrokeLines(outline, c.ClipLinesXY(append(box, box[0]))...)
		name := fmt.Sprint(sp.Start)
		if sp.Count > 1 {
			name = fmt.Sprintf("%d–%d", sp.Start, sp.Start+sp.Count-1)
		}
		if x1-x0 > label.Width(name)+vg.Points(2) {
			c.FillText(label, vg.Point{X: (x0 + x1) / 2, Y: (y0 + y1) / 2}, name)
		}
	}
}

func (b bars) DataRange() (xmin, xmax, ymin, ymax float64) {
	return 0, ms(b.rec.Wall), -0.5, float64(b.n) - 0.5
}

// drawTimeline writes rec's timeline to file (PNG, sized to the rows).
func drawTimeline(rec *record, file string) error {
	if len(rec.Slots) == 0 {
		return fmt.Errorf("no slots to draw")
	}
	b := bars{rec: rec, rows: map[[2]int]float64{}}
	for _, n := range rec.Slots {
		b.n += n
	}
	names := make([]string, b.n)
	// Row 0 (rank 0, slot 0) at the top.
	row := b.n - 1
	var busy, total time.Duration
	for r, n := range rec.Slots {
		for s := range n {
			b.rows[[2]int{r, s}] = float64(row)
			label := fmt.Sprintf("   rank %d slot %d", r, s) // the leading spaces keep the longest label inside the image
			if r < len(rec.Busy) && s < len(rec.Busy[r]) {
				label += fmt.Sprintf(" (%.0f%% busy)", 100*float64(rec.Busy[r][s])/float64(max(rec.Wall, 1)))
				busy += rec.Busy[r][s]
			}
			if r < len(rec.Sizes) && s < len(rec.Sizes[r]) && rec.Sizes[r][s].Batches > 0 {
				z := rec.Sizes[r][s]
				label += fmt.Sprintf("\nbatches of %d/%d/%d", z.Min, z.Median, z.Max)
			}
			total += rec.Wall
			names[row] = label
			row--
		}
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s\nwall %v, slots busy %.0f%% of the time; one bar per batch, labelled with its items; per slot the batch sizes smallest/median/largest",
		rec.Title, rec.Wall.Round(time.Millisecond), 100*float64(busy)/float64(max(total, 1)))
	p.Title.TextStyle.Font.Size = 10
	p.X.Label.Text = "time since the call started (ms)"
	p.X.Min = 0
	p.Add(plotter.NewGrid())
	p.Add(b)
	p.NominalY(names...)
	h := vg.Length(b.n)*vg.Points(26) + vg.Points(90)
	return p.Save(vg.Points(760), h, file)
}
