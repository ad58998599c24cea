package javaprops

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Field maps one .properties key to a field of a configuration struct C,
// read and written as Java's Properties loader and MixAll.properties2Object
// do.
type Field[C any] struct {
	Name string
	Get  func(*C) string
	Set  func(*C, string) error // the error names the key
}

// String is a field taken as it is.
func String[C any](name string, f func(*C) *string) Field[C] {
	return Field[C]{name, func(c *C) string { return *f(c) }, func(c *C, v string) error { *f(c) = v; return nil }}
}

// Bool is a field parsed as Java's Boolean.parseBoolean: "true" in any
// case, anything else false.
func Bool[C any](name string, f func(*C) *bool) Field[C] {
	return Field[C]{name, func(c *C) string { return strconv.FormatBool(*f(c)) }, func(c *C, v string) error {
		*f(c) = strings.EqualFold(strings.TrimSpace(v), "true")
		return nil
	}}
}

// Int is a decimal int field.
func Int[C any](name string, f func(*C) *int) Field[C] {
	return Field[C]{name, func(c *C) string { return strconv.Itoa(*f(c)) }, func(c *C, v string) error {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		*f(c) = n
		return nil
	}}
}

// Millis is a duration field written in milliseconds.
func Millis[C any](name string, f func(*C) *time.Duration) Field[C] {
	return Field[C]{name, func(c *C) string { return strconv.FormatInt(f(c).Milliseconds(), 10) }, func(c *C, v string) error {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		*f(c) = time.Duration(n) * time.Millisecond
		return nil
	}}
}

// Fields is a configuration's keys in the order they are printed.
type Fields[C any] []Field[C]

// Find returns the field named name.
func (fs Fields[C]) Find(name string) (Field[C], bool) {
	for _, f := range fs {
		if f.Name == name {
			return f, true
		}
	}
	return Field[C]{}, false
}

// Properties returns c's values as key/value pairs, in field order.
func (fs Fields[C]) Properties(c *C) Props {
	out := make(Props, 0, len(fs))
	for _, f := range fs {
		out = append(out, Entry{Key: f.Name, Value: f.Get(c)})
	}
	return out
}

// Int64 is a decimal int64 field.
func Int64[C any](name string, f func(*C) *int64) Field[C] {
	return Field[C]{name, func(c *C) string { return strconv.FormatInt(*f(c), 10) }, func(c *C, v string) error {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		*f(c) = n
		return nil
	}}
}
