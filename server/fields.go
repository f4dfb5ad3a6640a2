package server

import (
	"math"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// checkFields walks a request and reports, as InvalidArgument with the
// field path (`messages[1].role`, `options.tool_choice.mode`), the first
// enum value the contract does not declare and the first floating-point
// number that is NaN or infinite. Proto3 enums are open: the decoder keeps
// an unknown number, and an adapter's switch would then silently drop the
// option or send a default in its place. A NaN would reach the provider
// and come back as its failure. Message types from which neither an enum
// nor a float field can be reached are not walked, nor are
// google.protobuf's JSON types (Struct, Value: caller data such as schemas
// and extra_body, judged where they are encoded).
func checkFields(m protoreflect.Message) error {
	if field, why := walkFields(m); field != "" {
		return invalidField(field, "%s", why)
	}
	return nil
}

// walkFields returns the path of the first bad field (relative to m) and
// what is wrong with it; it allocates only when it finds one (and for the
// reflection view of a repeated field).
func walkFields(m protoreflect.Message) (string, string) {
	for _, fd := range planOf(m.Descriptor()) {
		if !m.Has(fd) {
			continue
		}
		v := m.Get(fd)
		name := string(fd.Name())
		switch {
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				if f, w := checkValue(fd, l.Get(i)); w != "" {
					return name + "[" + strconv.Itoa(i) + "]" + f, w
				}
			}
		case fd.IsMap():
			var field, why string
			v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				if f, w := checkValue(fd.MapValue(), mv); w != "" {
					field, why = name+"["+strconv.Quote(k.String())+"]"+f, w
					return false
				}
				return true
			})
			if why != "" {
				return field, why
			}
		default:
			if f, w := checkValue(fd, v); w != "" {
				return name + f, w
			}
		}
	}
	return "", ""
}

// checkValue checks one value of field fd; a bad value inside a message is
// returned with its path below fd (".role"), a bad value of fd itself with
// an empty path and a reason.
func checkValue(fd protoreflect.FieldDescriptor, v protoreflect.Value) (string, string) {
	switch fd.Kind() {
	case protoreflect.EnumKind:
		ed := fd.Enum()
		if ed.Values().ByNumber(v.Enum()) == nil {
			return "", "unknown " + string(ed.Name()) + " value " + strconv.Itoa(int(v.Enum())) + " (known: " + enumNames(ed) + ")"
		}
	case protoreflect.DoubleKind, protoreflect.FloatKind:
		if f := v.Float(); math.IsNaN(f) || math.IsInf(f, 0) {
			return "", "must be a finite number, got " + strconv.FormatFloat(f, 'g', -1, 64)
		}
	case protoreflect.MessageKind, protoreflect.GroupKind:
		if f, w := walkFields(v.Message()); w != "" {
			return "." + f, w
		}
	}
	return "", ""
}

func enumNames(ed protoreflect.EnumDescriptor) string {
	vals := ed.Values()
	names := make([]string, 0, vals.Len())
	for i := 0; i < vals.Len(); i++ {
		names = append(names, string(vals.Get(i).Name()))
	}
	return strings.Join(names, ", ")
}

// plans caches planOf per message type.
var plans sync.Map // protoreflect.MessageDescriptor → []protoreflect.FieldDescriptor

// planOf lists the fields of md that can hold an undeclared enum value or a
// non-finite float, themselves or in a message below them.
func planOf(md protoreflect.MessageDescriptor) []protoreflect.FieldDescriptor {
	if p, ok := plans.Load(md); ok {
		return p.([]protoreflect.FieldDescriptor)
	}
	var plan []protoreflect.FieldDescriptor
	fields := md.Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		vd := fd
		if fd.IsMap() {
			vd = fd.MapValue()
		}
		switch vd.Kind() {
		case protoreflect.EnumKind, protoreflect.DoubleKind, protoreflect.FloatKind:
			plan = append(plan, fd)
		case protoreflect.MessageKind, protoreflect.GroupKind:
			if reaches(vd.Message(), map[protoreflect.FullName]bool{}) {
				plan = append(plan, fd)
			}
		}
	}
	plans.Store(md, plan)
	return plan
}

func reaches(md protoreflect.MessageDescriptor, seen map[protoreflect.FullName]bool) bool {
	if seen[md.FullName()] || md.ParentFile().Package() == "google.protobuf" {
		return false
	}
	seen[md.FullName()] = true
	fields := md.Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if fd.IsMap() {
			fd = fd.MapValue()
		}
		switch fd.Kind() {
		case protoreflect.EnumKind, protoreflect.DoubleKind, protoreflect.FloatKind:
			return true
		case protoreflect.MessageKind, protoreflect.GroupKind:
			if reaches(fd.Message(), seen) {
				return true
			}
		}
	}
	return false
}
