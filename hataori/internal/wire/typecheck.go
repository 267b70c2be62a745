package wire

import (
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"time"
)

// ErrUnsupportedType is matched by errors.Is against every *Error of kind
// ErrType (and so against every error that wraps one).
var ErrUnsupportedType = errors.New("hataori: type cannot cross ranks")

// typeChecks caches CheckType's answer per type: reflect.Type → *Error
// (nil when the type is fine).
var typeChecks sync.Map

// CheckType reports whether values of type t survive the wire exactly:
// nil when they do, otherwise an *Error of kind ErrType whose message names
// t, the field path inside it and what is wrong, for example
//
//	hataori: type main.point cannot cross ranks: field x is unexported, …
//
// It refuses what msgpack would drop, change or fail on: unexported struct
// fields (unless tagged `msgpack:"-"` or of zero size), interface types
// (any included: a value's dynamic type does not survive, an int comes back
// as int8), channels, functions, unsafe.Pointer, uintptr, complex numbers
// outside the bulk path, map keys that hold pointers, struct layouts whose
// fields msgpack would lose (two fields with one msgpack name, a field
// shadowed by an inlined embedded struct, an embedded field of unexported
// non-struct type, an inlined embedded pointer, whose nil comes back
// non-nil), custom encoding on one side only, and custom encoding promoted
// from an embedded field, which silently drops the struct's other fields.
// A type with its own msgpack encoding (msgpack.CustomEncoder and
// CustomDecoder, Marshaler and Unmarshaler, encoding.BinaryMarshaler and
// BinaryUnmarshaler, or TextMarshaler and TextUnmarshaler, on the type or
// its pointer) is trusted and not inspected further. Recursive types are
// fine. A nil t (the type of a nil interface value) is refused.
//
// The answer depends on t alone and is cached: after the first call for a
// type, CheckType costs one sync.Map lookup.
func CheckType(t reflect.Type) error {
	if t == nil {
		return &Error{Kind: ErrType, Detail: "a nil type cannot cross ranks"}
	}
	if v, ok := typeChecks.Load(t); ok {
		if e := v.(*Error); e != nil {
			return e
		}
		return nil
	}
	c := &typeChecker{seen: map[reflect.Type]bool{}, inlining: map[reflect.Type]bool{}}
	var e *Error
	if !shapeOf(t).ok { // a top-level numeric slice travels in bulk
		if p := c.check(t, path{}); p != nil {
			e = &Error{Kind: ErrType, Detail: fmt.Sprintf("type %s cannot cross ranks: %s", t, p.text())}
		}
	}
	typeChecks.Store(t, e)
	if e != nil {
		return e
	}
	return nil
}

// CheckTypeFor is CheckType for T.
func CheckTypeFor[T any]() error { return CheckType(reflect.TypeFor[T]()) }

// path locates a part of the checked type as a Go expression on a value of
// it, without the value: "x", "Inner.x", "[i].Name", "Index[k]" (a map's
// values), "Index[key]" (its keys).
type path struct {
	expr  string
	key   bool // expr ends with "[key]": the map key type itself
	field bool // the last step of expr (before "[key]") selects a struct field
}

// mapKey is the path of the key type of the map at p.
func (p path) mapKey() path { return path{expr: p.expr + "[key]", key: true, field: p.field} }

func (p path) dot(name string) path {
	if p.expr == "" {
		return path{expr: name, field: true}
	}
	return path{expr: p.expr + "." + name, field: true}
}

func (p path) index(ix string) path { return path{expr: p.expr + ix} }

// where names the located part for a message: "field Inner.x",
// "element [i]", "the key type of field Index", or "" for the type itself.
func (p path) where() string {
	var s string
	switch {
	case p.expr == "":
	case p.field:
		s = "field " + p.expr
	default:
		s = "element " + p.expr
	}
	if p.key {
		base := path{expr: strings.TrimSuffix(p.expr, "[key]"), field: p.field}.where()
		if base == "" {
			return "the map key type"
		}
		return "the key type of " + base
	}
	return s
}

// problem is what is wrong at a path.
type problem struct {
	at  path
	msg string // follows where(), e.g. "is unexported (…)"
	// alone replaces "<where> <msg>" when the problem is not located at a
	// part of the type (struct-level problems name their fields in it).
	alone bool
}

func (p *problem) text() string {
	w := p.at.where()
	switch {
	case p.alone && w == "":
		return p.msg
	case p.alone:
		return "in " + w + ": " + p.msg
	case w == "":
		return "it " + p.msg
	}
	return w + " " + p.msg
}

type typeChecker struct {
	seen     map[reflect.Type]bool // composite types already checked or in progress
	inlining map[reflect.Type]bool // struct types whose fields are being laid out
}

const interfaceMsg = "the dynamic type of an interface value does not survive the wire " +
	"(an int comes back as int8, a struct as map[string]interface {}); use a concrete type"

// check reports the first problem of t at p, or nil.
func (c *typeChecker) check(t reflect.Type, p path) *problem {
	k := t.Kind()
	if k == reflect.Interface {
		return &problem{at: p, msg: fmt.Sprintf("has interface type %s: %s", t, interfaceMsg)}
	}
	if k == reflect.Pointer {
		return c.check(t.Elem(), p)
	}
	if enc, dec := encodeMethod(t), decodeMethod(t); enc != "" || dec != "" {
		switch {
		case dec == "":
			return &problem{at: p, msg: fmt.Sprintf("has type %s, which has the msgpack encoding method %s but no decoding method "+
				"(implement both, for example EncodeMsgpack and DecodeMsgpack)", t, enc)}
		case enc == "":
			return &problem{at: p, msg: fmt.Sprintf("has type %s, which has the msgpack decoding method %s but no encoding method "+
				"(implement both, for example EncodeMsgpack and DecodeMsgpack)", t, dec)}
		}
		if k == reflect.Struct {
			return promoted(t, enc, p)
		}
		return nil // its own encoding: trusted
	}
	switch k {
	case reflect.Bool, reflect.String,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return nil
	case reflect.Uintptr:
		return &problem{at: p, msg: fmt.Sprintf("has type %s, which msgpack cannot encode (use uint64)", t)}
	case reflect.Complex64, reflect.Complex128:
		return &problem{at: p, msg: fmt.Sprintf("has type %s, which msgpack cannot encode "+
			"(a slice of complex numbers travels as a top-level value or as a Bulk field; otherwise use two float fields)", t)}
	case reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return &problem{at: p, msg: fmt.Sprintf("has type %s, which cannot cross ranks", t)}
	}
	if c.seen[t] {
		return nil // checked, or being checked further up: recursive types end here
	}
	c.seen[t] = true
	switch k {
	case reflect.Slice, reflect.Array:
		return c.check(t.Elem(), p.index("[i]"))
	case reflect.Map:
		kp := p.mapKey()
		if pr := c.check(t.Key(), kp); pr != nil {
			return pr
		}
		if holdsPointer(t.Key(), map[reflect.Type]bool{}) {
			return &problem{at: kp, msg: fmt.Sprintf("holds pointers (%s), whose identity does not survive the wire "+
				"(the receiver's keys would be new pointers that no lookup finds)", t.Key())}
		}
		if ptrOnlyEncoder(t.Elem()) {
			return &problem{at: p.index("[k]"), msg: fmt.Sprintf("has type %s, whose msgpack encoding method %s has a pointer receiver, "+
				"which msgpack cannot call on a map value (give the method a value receiver, or store pointers in the map)", t.Elem(), encodeMethod(t.Elem()))}
		}
		return c.check(t.Elem(), p.index("[k]"))
	case reflect.Struct:
		return c.checkStruct(t, p)
	}
	return &problem{at: p, msg: fmt.Sprintf("has type %s, which cannot cross ranks", t)}
}

// msgpackField is a struct field as msgpack encodes it.
type msgpackField struct {
	name string // the msgpack key
	at   path
	typ  reflect.Type
}

// checkStruct checks the fields of struct type t the way msgpack's
// getFields lays them out: ignored fields are skipped, embedded structs
// with msgpack's default encoding are inlined unless that would shadow a
// field, and every resulting field's type is checked.
func (c *typeChecker) checkStruct(t reflect.Type, p path) *problem {
	fields, pr := c.structFields(t, p)
	if pr != nil {
		return pr
	}
	rel := func(q path) string { return strings.TrimPrefix(strings.TrimPrefix(q.expr, p.expr), ".") }
	byName := map[string]path{}
	for _, f := range fields {
		if prev, dup := byName[f.name]; dup {
			return &problem{at: p, alone: true, msg: fmt.Sprintf(
				"fields %s and %s of %s both have the msgpack name %q, so one of them is lost (rename one in its msgpack tag)",
				rel(prev), rel(f.at), t, f.name)}
		}
		byName[f.name] = f.at
	}
	for _, f := range fields {
		if pr := c.check(f.typ, f.at); pr != nil {
			return pr
		}
	}
	return nil
}

// structFields lists the fields msgpack encodes for struct type t (at p),
// in order, with embedded structs inlined as msgpack inlines them, and
// reports a field msgpack would skip or cannot decode.
func (c *typeChecker) structFields(t reflect.Type, p path) ([]msgpackField, *problem) {
	c.inlining[t] = true
	defer delete(c.inlining, t)
	var out []msgpackField
	names := map[string]bool{} // msgpack's fs.Map while the fields are added
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := parseTag(f.Tag.Get("msgpack"))
		at := p.dot(f.Name)
		skip, pr := skippedField(t, f, tag, at)
		if pr != nil {
			return nil, pr
		}
		if skip {
			continue
		}
		inner, inlined, pr := c.inlineEmbedded(f, tag, at, names)
		if pr != nil {
			return nil, pr
		}
		if inlined {
			for _, g := range inner {
				names[g.name] = true
			}
			out = append(out, inner...)
			continue
		}
		if pr := embeddedUndecodable(f, at); pr != nil {
			return nil, pr
		}
		name := tag.name
		if name == "" {
			name = f.Name
		}
		names[name] = true
		out = append(out, msgpackField{name: name, at: at, typ: f.Type})
	}
	return out, nil
}

// skippedField reports whether msgpack leaves field f of struct type t (at
// at) out with no data lost: a field tagged `msgpack:"-"`, msgpack's
// options marker _msgpack, or an unexported field that holds no data. It
// reports an unexported field that holds data, which msgpack skips
// silently, as a problem.
func skippedField(t reflect.Type, f reflect.StructField, tag msgpackTag, at path) (bool, *problem) {
	if tag.name == "-" {
		return true, nil // dropped on purpose
	}
	if f.Name == "_msgpack" { // msgpack's options marker, never encoded
		return true, nil
	}
	if !f.IsExported() && !f.Anonymous {
		if f.Name == "_" || f.Type.Size() == 0 {
			return true, nil // holds no data
		}
		return false, &problem{at: at, msg: fmt.Sprintf(
			"is unexported, and msgpack skips unexported fields (export it, give %s its own msgpack encoding "+
				"with EncodeMsgpack and DecodeMsgpack, or tag the field `msgpack:\"-\"` to leave it out on purpose)", t)}
	}
	return false, nil
}

// inlineEmbedded decides whether msgpack inlines the embedded field f (at
// at) into the struct being laid out, whose fields so far have the
// msgpack names in names: it does for an embedded struct (or pointer to
// one) with msgpack's default encoding, not tagged noinline, unless one of
// its fields would shadow an earlier field, or when tagged inline. When it
// does, inlineEmbedded returns the inlined fields and inlined true. It
// reports the inlining msgpack gets wrong: a struct embedded inside
// itself, an inline tag that shadows a field or that is on a pointer, and
// an inlined pointer.
func (c *typeChecker) inlineEmbedded(f reflect.StructField, tag msgpackTag, at path, names map[string]bool) (inner []msgpackField, inlined bool, pr *problem) {
	if !f.Anonymous || tag.has("noinline") {
		return nil, false, nil
	}
	base := f.Type
	for base.Kind() == reflect.Pointer {
		base = base.Elem()
	}
	if base.Kind() != reflect.Struct || !defaultCoded(base) {
		return nil, false, nil
	}
	if c.inlining[base] {
		// msgpack inlines without end and overflows the stack.
		return nil, false, &problem{at: at, msg: fmt.Sprintf(
			"embeds %s inside itself, which msgpack inlines without end (tag the field `msgpack:\",noinline\"` or make it a named field)", base)}
	}
	inner, pr = c.structFields(base, at)
	if pr != nil {
		return nil, false, pr
	}
	shadowed := firstShadowed(inner, names)
	inline := shadowed == nil
	if tag.has("inline") {
		if f.Type.Kind() == reflect.Pointer {
			return nil, false, &problem{at: at, msg: "is an embedded pointer tagged inline, which msgpack cannot inline (embed the struct by value)"}
		}
		if shadowed != nil {
			return nil, false, &problem{at: shadowed.at, msg: fmt.Sprintf(
				"is shadowed by an earlier field with the msgpack name %q, so msgpack's inline leaves it out (rename one of them)",
				shadowed.name)}
		}
		inline = true
	}
	if !inline {
		return nil, false, nil
	}
	if f.Type.Kind() == reflect.Pointer {
		if !f.IsExported() {
			return nil, false, &problem{at: at, msg: fmt.Sprintf(
				"is an embedded pointer to the unexported type %s, which msgpack cannot decode into (embed it by value)", base)}
		}
		return nil, false, &problem{at: at, msg: fmt.Sprintf(
			"is an embedded pointer that msgpack inlines, so a nil %s comes back as a pointer to a zero %s "+
				"(embed the struct by value, or tag the field `msgpack:\",noinline\"`)", f.Type, base)}
	}
	return inner, true, nil
}

// firstShadowed returns the first of fields whose msgpack name is in names
// (an earlier field's), or nil.
func firstShadowed(fields []msgpackField, names map[string]bool) *msgpackField {
	for j := range fields {
		if names[fields[j].name] {
			return &fields[j]
		}
	}
	return nil
}

// embeddedUndecodable reports the embedded field f (at at) of unexported
// type that stays a field of its own, unless msgpack can decode it: it is
// decoded through reflect, which may set it only when it is a struct value
// decoded field by field (its exported fields are settable); anything else
// panics in the decoder.
func embeddedUndecodable(f reflect.StructField, at path) *problem {
	if f.Anonymous && !f.IsExported() && (f.Type.Kind() != reflect.Struct || !defaultCoded(f.Type)) {
		return &problem{at: at, msg: fmt.Sprintf(
			"is an embedded field of the unexported type %s, which msgpack encodes but cannot decode into "+
				"(export the type, make it a named exported field, or tag it `msgpack:\"-\"`)", f.Type)}
	}
	return nil
}

// defaultCoded reports whether msgpack encodes struct type t field by
// field (it has none of the encoding methods msgpack honours).
func defaultCoded(t reflect.Type) bool { return encodeMethod(t) == "" && decodeMethod(t) == "" }

// promoted reports the fields lost when the msgpack encoding method enc of
// struct type t is promoted from an embedded field: msgpack then encodes
// only that field's value and drops every other field.
func promoted(t reflect.Type, enc string, p path) *problem {
	from := -1
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous && hasMethod(f.Type, enc) {
			from = i
			break
		}
	}
	if from < 0 || declared(t, enc) {
		return nil
	}
	emb := t.Field(from)
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if i == from || f.Name == "_" || f.Type.Size() == 0 || parseTag(f.Tag.Get("msgpack")).name == "-" {
			continue
		}
		return &problem{at: p.dot(f.Name), msg: fmt.Sprintf(
			"is lost: the msgpack encoding of %s is the %s method promoted from its embedded field %s, which encodes that field alone "+
				"(give %s its own encoding methods, or make %s a named field)", t, enc, emb.Name, t, emb.Name)}
	}
	if fromTime(emb.Type, enc) {
		// msgpack encodes t with time.Time's MarshalBinary, not with
		// the codec's time coder (registered for time.Time alone).
		return &problem{at: p.dot(emb.Name), msg: fmt.Sprintf(
			"embeds time.Time, so msgpack encodes %s with the %s method of time.Time, which keeps the UTC offset "+
				"but not the zone's name or location (make %s a named field, or give %s its own encoding methods)", t, enc, emb.Name, t)}
	}
	return nil
}

var timeType = reflect.TypeFor[time.Time]()

// fromTime reports whether the method name that a struct gets from its
// embedded field of type f is time.Time's, promoted through any chain of
// embedded fields.
func fromTime(f reflect.Type, name string) bool {
	for range 64 { // embedding chains are short; a cycle ends here
		for f.Kind() == reflect.Pointer {
			f = f.Elem()
		}
		if f == timeType {
			return true
		}
		if f.Kind() != reflect.Struct || declared(f, name) {
			return false
		}
		next := -1
		for i := 0; i < f.NumField(); i++ {
			if g := f.Field(i); g.Anonymous && hasMethod(g.Type, name) {
				next = i
				break
			}
		}
		if next < 0 {
			return false
		}
		f = f.Field(next).Type
	}
	return false
}

// hasMethod reports whether t or *t has a method called name.
func hasMethod(t reflect.Type, name string) bool {
	if _, ok := t.MethodByName(name); ok {
		return true
	}
	if t.Kind() != reflect.Pointer {
		_, ok := reflect.PointerTo(t).MethodByName(name)
		return ok
	}
	return false
}

// declared reports whether the method name of t (or *t) is declared on t
// itself rather than promoted from an embedded field: the compiler
// generates promoted methods as wrappers, which the runtime reports in the
// file "<autogenerated>".
func declared(t reflect.Type, name string) bool {
	m, ok := t.MethodByName(name)
	if !ok {
		if m, ok = reflect.PointerTo(t).MethodByName(name); !ok {
			return false
		}
	}
	pc := m.Func.Pointer()
	fn := runtime.FuncForPC(pc)
	if fn == nil {
		return true // cannot tell: assume declared, the common case
	}
	file, _ := fn.FileLine(pc)
	return file != "<autogenerated>"
}

// codingMethod is one of the encoding methods msgpack's getEncoder and
// getDecoder honour: a type has it when its method set holds an exported
// method of that name with exactly these parameter and result types (the
// method set of the interface msgpack asserts). It is recognised by name
// and signature, so that the type check needs no msgpack import (and the
// build without an MPI backend links no serialization library);
// TestCodingMethodsMatchInterfaces pins that it agrees with Implements on
// msgpack's and encoding's interfaces.
type codingMethod struct {
	name          string
	args, results []func(reflect.Type) bool
}

// msgpackPath is the import path of the msgpack package the codec uses.
const msgpackPath = "github.com/vmihailenco/msgpack/v5"

var (
	errorType = reflect.TypeFor[error]()
	bytesType = reflect.TypeFor[[]byte]()
)

// is matches exactly the type want.
func is(want reflect.Type) func(reflect.Type) bool {
	return func(t reflect.Type) bool { return t == want }
}

// msgpackPointer matches *msgpack.<name>.
func msgpackPointer(name string) func(reflect.Type) bool {
	return func(t reflect.Type) bool {
		return t.Kind() == reflect.Pointer && t.Elem().PkgPath() == msgpackPath && t.Elem().Name() == name
	}
}

type matchers = []func(reflect.Type) bool

// The methods msgpack's getEncoder/getDecoder honour, in its order:
// msgpack.CustomEncoder/CustomDecoder, msgpack.Marshaler/Unmarshaler,
// encoding.BinaryMarshaler/BinaryUnmarshaler, encoding.TextMarshaler/
// TextUnmarshaler.
var (
	encodeMethods = []codingMethod{
		{"EncodeMsgpack", matchers{msgpackPointer("Encoder")}, matchers{is(errorType)}},
		{"MarshalMsgpack", nil, matchers{is(bytesType), is(errorType)}},
		{"MarshalBinary", nil, matchers{is(bytesType), is(errorType)}},
		{"MarshalText", nil, matchers{is(bytesType), is(errorType)}},
	}
	decodeMethods = []codingMethod{
		{"DecodeMsgpack", matchers{msgpackPointer("Decoder")}, matchers{is(errorType)}},
		{"UnmarshalMsgpack", matchers{is(bytesType)}, matchers{is(errorType)}},
		{"UnmarshalBinary", matchers{is(bytesType)}, matchers{is(errorType)}},
		{"UnmarshalText", matchers{is(bytesType)}, matchers{is(errorType)}},
	}
)

// in reports whether the method set of t itself (not *t) holds m, as
// t.Implements reports for the one-method interface of m.
func (m codingMethod) in(t reflect.Type) bool {
	meth, ok := t.MethodByName(m.name)
	if !ok {
		return false
	}
	ft, skip := meth.Type, 1 // the receiver is the first parameter
	if t.Kind() == reflect.Interface {
		skip = 0
	}
	if ft.IsVariadic() || ft.NumIn()-skip != len(m.args) || ft.NumOut() != len(m.results) {
		return false
	}
	for i, match := range m.args {
		if !match(ft.In(skip + i)) {
			return false
		}
	}
	for i, match := range m.results {
		if !match(ft.Out(i)) {
			return false
		}
	}
	return true
}

// on reports whether t or *t has m.
func (m codingMethod) on(t reflect.Type) bool { return m.in(t) || m.in(reflect.PointerTo(t)) }

// encodeMethod names the method msgpack encodes t (or *t) with, or "".
func encodeMethod(t reflect.Type) string {
	for _, m := range encodeMethods {
		if m.on(t) {
			return m.name
		}
	}
	return ""
}

// ptrOnlyEncoder reports whether msgpack encodes t with a method that only
// *t has, which it can call only on an addressable value (not on a map
// value, for example).
func ptrOnlyEncoder(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer || t.Kind() == reflect.Interface {
		return false
	}
	for _, m := range encodeMethods {
		if m.in(t) {
			return false
		}
	}
	return encodeMethod(t) != ""
}

// decodeMethod names the method msgpack decodes t (or *t) with, or "".
func decodeMethod(t reflect.Type) string {
	for _, m := range decodeMethods {
		if m.on(t) {
			return m.name
		}
	}
	return ""
}

// holdsPointer reports whether values of t (a map key type) contain a
// pointer that msgpack follows, so that equal keys on the sender become
// distinct keys on the receiver.
func holdsPointer(t reflect.Type, seen map[reflect.Type]bool) bool {
	if encodeMethod(t) != "" || seen[t] {
		return false
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Pointer:
		return true
	case reflect.Array:
		return holdsPointer(t.Elem(), seen)
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if holdsPointer(t.Field(i).Type, seen) {
				return true
			}
		}
	}
	return false
}

// msgpackTag is a parsed `msgpack:"name,opt,key:value"` struct tag.
type msgpackTag struct {
	name string
	opts []string // option keys
}

func (t msgpackTag) has(opt string) bool {
	for _, o := range t.opts {
		if o == opt {
			return true
		}
	}
	return false
}

// parseTag parses a msgpack struct tag as msgpack's tag parser does for
// the parts that decide the layout: the name (the first element, unless it
// is a key:value option) and the option keys.
func parseTag(s string) msgpackTag {
	var t msgpackTag
	for i, part := range strings.Split(s, ",") {
		key, _, isOpt := strings.Cut(part, ":")
		key = strings.TrimSpace(key)
		if i == 0 && !isOpt {
			t.name = key
			continue
		}
		if key != "" {
			t.opts = append(t.opts, key)
		}
	}
	return t
}
