// Package docs holds the project's prose: the protocol page, the
// architecture, the security residuals and the decision record. It has no
// code; its tests keep the decision record a record (see record_test.go).
package docs
