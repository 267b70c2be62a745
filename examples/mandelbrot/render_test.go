package main

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"testing"
)

func TestRenderRow(t *testing.T) {
	p := params{Width: 64, Height: 48, MaxIter: 100, CX: -0.5, CY: 0, Span: 3}
	mid := renderRow(p.Height/2, p)
	// The centre (-0.5, 0) is inside the set; the left edge (-2, 0)
	// escapes after a few iterations and the right edge (1, 0) at once.
	if mid[p.Width/2] != 0 {
		t.Errorf("centre pixel = %d, want 0 (inside)", mid[p.Width/2])
	}
	if mid[p.Width-1] == 0 {
		t.Errorf("right edge pixel is inside the set")
	}
	top := renderRow(0, p)
	for x, v := range top {
		if v == 0 {
			t.Fatalf("top row pixel %d is inside the set", x)
		}
	}
	// The set is symmetric about the real axis.
	if !bytes.Equal(renderRow(1, p), renderRow(p.Height-1, p)) {
		t.Errorf("rows 1 and %d differ", p.Height-1)
	}
}

func TestRunLocal(t *testing.T) {
	out := t.TempDir() + "/m.png"
	p := params{Width: 80, Height: 60, MaxIter: 50, CX: -0.5, Span: 3, Out: out}
	if err := runLocal(p); err != nil {
		t.Fatal(err)
	}
	img, err := readPNG(out)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 80 || b.Dy() != 60 {
		t.Fatalf("image %v, want 80x60", b)
	}
	// Rows land in order: each image row equals a direct render.
	for y := range p.Height {
		want := renderRow(y, p)
		for x := range p.Width {
			r1, g1, b1, _ := img.At(x, y).RGBA()
			r2, g2, b2, _ := palette()[want[x]].RGBA()
			if r1 != r2 || g1 != g2 || b1 != b2 {
				t.Fatalf("pixel (%d,%d) differs from renderRow", x, y)
			}
		}
	}
}

func readPNG(name string) (image.Image, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return png.Decode(f)
}
