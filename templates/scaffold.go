package templates

import "embed"

// Scaffold holds the files `snuggen new app` and `snuggen new host` render:
// scaffold/app/ and scaffold/host/. A name ending in ".tmpl" is a text/template
// rendered with the scaffold's parameters and written without the suffix; any
// other file is copied as it is.
//
//go:embed all:scaffold
var Scaffold embed.FS
