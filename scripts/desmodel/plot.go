package main

import (
	"fmt"
	"image/color"
	"os"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Okabe–Ito colours, one per policy.
var colours = []color.RGBA{
	{0, 114, 178, 255}, {230, 159, 0, 255}, {0, 158, 115, 255}, {204, 121, 167, 255}, {213, 94, 0, 255},
}

// drawScan draws the scan: one column per distribution; the top row the
// throughput against ideal, the bottom row the TASKs the root's
// coordinator sends per second, both over the slot count (log scale), one line per policy.
func drawScan(res []Result, file string) error {
	var dists []string
	byDist := map[string]map[string][]Result{}
	var pols []string
	seenPol := map[string]bool{}
	for _, r := range res {
		d, p := r.Dist.Name, r.Policy.Name
		if byDist[d] == nil {
			byDist[d] = map[string][]Result{}
			dists = append(dists, d)
		}
		byDist[d][p] = append(byDist[d][p], r)
		if !seenPol[p] {
			seenPol[p] = true
			pols = append(pols, p)
		}
	}
	rows, cols := 2, len(dists)
	plots := make([][]*plot.Plot, rows)
	for i := range plots {
		plots[i] = make([]*plot.Plot, cols)
	}
	for j, d := range dists {
		eff, deal := plot.New(), plot.New()
		eff.Title.Text = "items " + d
		eff.Y.Label.Text = "throughput ÷ ideal"
		deal.Y.Label.Text = "TASKs sent per second (root coordinator)"
		for _, p := range []*plot.Plot{eff, deal} {
			p.X.Label.Text = "slots (min(slots, 256) ranks)"
			p.X.Scale = plot.LogScale{}
			p.X.Tick.Marker = pow2Ticks{}
			p.Add(plotter.NewGrid())
		}
		eff.Y.Min, eff.Y.Max = 0, 1.05
		deal.Y.Scale = plot.LogScale{}
		deal.Y.Tick.Marker = plot.LogTicks{Prec: 1}
		for k, name := range pols {
			rs := byDist[d][name]
			pe, pd := make(plotter.XYs, 0, len(rs)), make(plotter.XYs, 0, len(rs))
			for _, r := range rs {
				pe = append(pe, plotter.XY{X: float64(r.Slots()), Y: r.Eff})
				if r.RemoteRate > 0 {
					pd = append(pd, plotter.XY{X: float64(r.Slots()), Y: r.RemoteRate})
				}
			}
			for _, pair := range []struct {
				p   *plot.Plot
				xys plotter.XYs
			}{{eff, pe}, {deal, pd}} {
				l, pts, err := plotter.NewLinePoints(pair.xys)
				if err != nil {
					return err
				}
				l.Color = colours[k%len(colours)]
				l.Width = vg.Points(1.5)
				pts.Color = l.Color
				pts.Shape = draw.CircleGlyph{}
				pts.Radius = vg.Points(2)
				pair.p.Add(l, pts)
				if pair.p == eff && j == 0 {
					eff.Legend.Add(name, l, pts)
				}
			}
		}
		// The dealer's capacity at batch 1 (no waiting for the lock).
		capLine := plotter.NewFunction(func(float64) float64 { return 1e9 / float64(res[0].Costs.RootPerBatch(1)) })
		capLine.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		capLine.Color = color.Gray{Y: 100}
		deal.Add(capLine)
		if j == 0 {
			deal.Legend.Add("root coordinator capacity at batch 1", capLine)
			deal.Legend.Top = true
			eff.Legend.Left = true
			eff.Legend.Top = false
		}
		plots[0][j], plots[1][j] = eff, deal
	}
	w, h := vg.Length(cols)*4.2*vg.Inch, 7*vg.Inch
	img := vgimg.New(w, h)
	dc := draw.New(img)
	t := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 4}
	canvases := plot.Align(plots, t, dc)
	for i := range plots {
		for j := range plots[i] {
			plots[i][j].Draw(canvases[i][j])
		}
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", file, err)
	}
	return f.Close()
}

// pow2Ticks marks the powers of 4 (1, 4, 16, …) on a log axis.
type pow2Ticks struct{}

func (pow2Ticks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for v := 1.0; v <= hi*1.0001; v *= 2 {
		if v < lo*0.9999 {
			continue
		}
		t := plot.Tick{Value: v}
		if n := int(v); n&(n-1) == 0 && (bitsLen(n)-1)%2 == 0 {
			t.Label = fmt.Sprint(n)
		}
		ts = append(ts, t)
	}
	return ts
}

func bitsLen(n int) int {
	l := 0
	for ; n > 0; n >>= 1 {
		l++
	}
	return l
}
