// The protocol's names and limits the page needs, from the generated frame
// package (frame): site.go defines SNUG_GEN in the page's script before
// this bundle, so nothing here restates a type, code or limit by hand.

/* global SNUG_GEN */
export const GEN = Object.freeze(SNUG_GEN);
