module github.com/hataori/hataori-go

go 1.26.0

require (
	github.com/ebitengine/purego v0.9.1
	github.com/vmihailenco/msgpack/v5 v5.4.1
	golang.org/x/sys v0.50.0
	gonum.org/v1/gonum v0.16.0
)

require github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect
