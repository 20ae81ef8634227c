// Package csscolor reads an app's icon colour (snug:icon-color, the
// announce's iconColor) as a CSS colour and nothing else: a hex colour, an
// rgb(), rgba(), hsl() or hsla() of numbers, or a named colour. Anything
// else, var() with a fallback, a gradient, url() or image-set() included,
// is no colour: the host drops it and the runner sets only background-color
// (issue 31 item 3: a var() fallback set a gradient, a data: image and made
// the runner try an outside URL).
package csscolor

import (
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/snuggen/snuggen/frame"
)

// number is a CSS number with an optional unit of the colour functions.
const number = `[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:e[+-]?[0-9]+)?(?:%|deg|rad|grad|turn)?`

// Pattern is the grammar of an icon colour as a regular expression that
// Go and JavaScript read alike (the runner page gets it through
// site.GEN): a hex colour of 3, 4, 6 or 8 digits, a colour function of
// three numbers and an optional alpha (commas, or spaces and " / "), or a
// named colour. Case is ignored.
var Pattern = `^(?:#(?:[0-9a-f]{3,4}|[0-9a-f]{6}|[0-9a-f]{8})` +
	`|(?:rgba?|hsla?)\( *` + number + `(?: *, *` + number + `){2}(?: *, *` + number + `)? *\)` +
	`|(?:rgba?|hsla?)\( *` + number + `(?: +` + number + `){2}(?: */ *` + number + `)? *\)` +
	`|(?:` + strings.Join(Names, "|") + `))$`

var re = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("(?i)" + Pattern) })

// Valid reports whether s is an icon colour.
func Valid(s string) bool {
	return utf8.RuneCountInString(s) <= frame.AppAnnounceIconColorMaxLength && re().MatchString(s)
}

// Clean returns s when it is an icon colour, and "" otherwise.
func Clean(s string) string {
	if Valid(s) {
		return s
	}
	return ""
}

// Names are the CSS named colours (CSS Color 4) and transparent.
var Names = []string{
	"aliceblue", "antiquewhite", "aqua", "aquamarine", "azure", "beige", "bisque", "black",
	"blanchedalmond", "blue", "blueviolet", "brown", "burlywood", "cadetblue", "chartreuse",
	"chocolate", "coral", "cornflowerblue", "cornsilk", "crimson", "cyan", "darkblue", "darkcyan",
	"darkgoldenrod", "darkgray", "darkgreen", "darkgrey", "darkkhaki", "darkmagenta",
	"darkolivegreen", "darkorange", "darkorchid", "darkred", "darksalmon", "darkseagreen",
	"darkslateblue", "darkslategray", "darkslategrey", "darkturquoise", "darkviolet", "deeppink",
	"deepskyblue", "dimgray", "dimgrey", "dodgerblue", "firebrick", "floralwhite", "forestgreen",
	"fuchsia", "gainsboro", "ghostwhite", "gold", "goldenrod", "gray", "green", "greenyellow", "grey",
	"honeydew", "hotpink", "indianred", "indigo", "ivory", "khaki", "lavender", "lavenderblush",
	"lawngreen", "lemonchiffon", "lightblue", "lightcoral", "lightcyan", "lightgoldenrodyellow",
	"lightgray", "lightgreen", "lightgrey", "lightpink", "lightsalmon", "lightseagreen",
	"lightskyblue", "lightslategray", "lightslategrey", "lightsteelblue", "lightyellow", "lime",
	"limegreen", "linen", "magenta", "maroon", "mediumaquamarine", "mediumblue", "mediumorchid",
	"mediumpurple", "mediumseagreen", "mediumslateblue", "mediumspringgreen", "mediumturquoise",
	"mediumvioletred", "midnightblue", "mintcream", "mistyrose", "moccasin", "navajowhite", "navy",
	"oldlace", "olive", "olivedrab", "orange", "orangered", "orchid", "palegoldenrod", "palegreen",
	"paleturquoise", "palevioletred", "papayawhip", "peachpuff", "peru", "pink", "plum", "powderblue",
	"purple", "rebeccapurple", "red", "rosybrown", "royalblue", "saddlebrown", "salmon", "sandybrown",
	"seagreen", "seashell", "sienna", "silver", "skyblue", "slateblue", "slategray", "slategrey",
	"snow", "springgreen", "steelblue", "tan", "teal", "thistle", "tomato", "transparent",
	"turquoise", "violet", "wheat", "white", "whitesmoke", "yellow", "yellowgreen",
}
