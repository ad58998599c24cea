// Package javaprops reads and writes Java .properties files the way
// java.util.Properties.load does, keeping the entries in file order:
//
//	# comment / ! comment         (first non-blank character)
//	key=value  key: value  key value
//	long\                          (odd number of trailing backslashes:
//	    value                       the line continues, leading blanks dropped)
//	\uXXXX \t \n \r \f, \x = x     escapes in keys and values
//
// Bytes are taken as they come (UTF-8 in, UTF-8 out); Java reads an
// InputStream as ISO-8859-1, which only differs for non-ASCII files. A
// later duplicate key overrides an earlier one, as in Java.
package javaprops
