package recall

import (
	"strconv"
	"strings"
)

func containsSpace(s string) bool { return strings.Contains(s, " ") }
func itoa(n int64) string         { return strconv.FormatInt(n, 10) }
