package main

import (
	"image"
	"image/color"
	"math"
)

// params describes the image and the region of the complex plane.
type params struct {
	Width, Height int
	MaxIter       int
	// Centre and horizontal extent of the view.
	CX, CY, Span float64
	// Out is the PNG file to write.
	Out string
}

// renderRow returns the palette index of every pixel of row y: the escape
// iteration, square-root scaled to 1..255 to brighten the edges, or 0 for
// points inside the set.
func renderRow(y int, p params) []uint8 {
	row := make([]uint8, p.Width)
	scale := p.Span / float64(p.Width)
	ci := p.CY + (float64(y)-float64(p.Height)/2)*scale
	for x := range row {
		cr := p.CX + (float64(x)-float64(p.Width)/2)*scale
		zr, zi := 0.0, 0.0
		n := 0
		for ; n < p.MaxIter && zr*zr+zi*zi <= 4; n++ {
			zr, zi = zr*zr-zi*zi+cr, 2*zr*zi+ci
		}
		if n < p.MaxIter {
			row[x] = uint8(1 + 254*math.Sqrt(float64(n)/float64(p.MaxIter)))
		}
	}
	return row
}

// palette maps index 0 (inside the set) to black and 1..255 to a blue to
// white ramp.
func palette() color.Palette {
	pal := make(color.Palette, 256)
	pal[0] = color.Black
	for i := 1; i < 256; i++ {
		t := float64(i) / 255
		pal[i] = color.RGBA{R: uint8(255 * t * t), G: uint8(255 * t), B: uint8(128 + 127*t), A: 255}
	}
	return pal
}

// assemble builds the image from its rows, in order.
func assemble(rows [][]uint8, p params) *image.Paletted {
	img := image.NewPaletted(image.Rect(0, 0, p.Width, p.Height), palette())
	for y, row := range rows {
		copy(img.Pix[y*img.Stride:], row)
	}
	return img
}
