package frame

import (
	"fmt"
	"testing"
)

func TestTry(t *testing.T) {
	for _, s := range []string{
		`{"v":1,"type":"snug:net-request","requestId":"r1","instanceId":"i1","url":"https://example.com/","method":"GET","headers":{"Accept":"x"}}`,
		`{"v":1,"type":"snug:net-request","requestId":"r1","instanceId":"i1","URL":"https://example.com/","method":"GET"}`,
		`{"v":1,"type":"snug:net-request","requestId":"r1","instanceId":"i1","url":"https://example.com/","method":"GET","body":"x","headers":{"Authorization":"x","authorization":"y"}}`,
		`{"v":1,"type":"snug:open-url-request","requestId":"r1","instanceId":"i1","url":"https://user@example.com/"}`,
		`{"v":2,"type":"snug:app-cancel","requestId":"r1"}`,
		`{"v":1,"type":"snug:future"}`,
		`{"v":1,"type":"snug:app-response","requestId":"r1","ok":true,"streaming":false}`,
		`{"v":1,"type":"snug:host-ready","instanceId":"i","protocolVersions":[1],"capabilities":{"streaming":true,"db":true,"auth":false},"theme":{"mode":"dim"}}`,
		`{"v":1,"type":"snug:db-request","requestId":"r1","instanceId":"i1","op":"exec","sql":"select ?","params":[1,"a",null,true,{}]}`,
		`{"v":1,"type":"snug:app-cancel","requestId":"r1",}`,
	} {
		f, err := Parse([]byte(s))
		fmt.Printf("%T %v\n", f, err)
		if re, ok := err.(*RejectError); ok {
			a := re.Answer()
			if a != nil {
				b, _ := Marshal(a)
				fmt.Println("  answer:", string(b))
			}
		}
	}
}
