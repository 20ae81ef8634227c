package frame_test

import (
	"errors"
	"fmt"

	"github.com/snuggen/snuggen/frame"
)

// Parse reaches one of three verdicts on a frame's JSON text: accept (a
// typed frame), ignore (nil, nil: an unknown type, R2) or reject (a
// *RejectError, whose Answer is the frame a host sends back when a requestId
// was recovered, R1).
func ExampleParse() {
	texts := []string{
		`{"v":1,"type":"snug:app-cancel","requestId":"r1","instanceId":"i1"}`,
		`{"v":1,"type":"snug:future-thing","requestId":"r2"}`,
		`{"v":1,"type":"snug:net-request","requestId":"r3","instanceId":"i1","url":"https://api.example.com/","method":"GET","headers":{"Authorization":"Bearer x"}}`,
	}
	for _, text := range texts {
		f, err := frame.Parse([]byte(text))
		var rej *frame.RejectError
		switch {
		case err == nil && f != nil:
			fmt.Printf("accept %T\n", f)
		case err == nil:
			fmt.Println("ignore")
		case errors.As(err, &rej):
			fmt.Println("reject", rej.Code, rej.Violations[0])
			answer, _ := frame.Marshal(rej.Answer())
			fmt.Println("answer", string(answer))
		}
	}
	// Output:
	// accept *frame.AppCancel
	// ignore
	// reject MALFORMED /headers/Authorization: credential-shaped header; the host injects credentials, an app cannot send them (net.header.credential)
	// answer {"v":1,"type":"snug:net-response","requestId":"r3","ok":false,"error":{"code":"MALFORMED","message":"/headers/Authorization: credential-shaped header; the host injects credentials, an app cannot send them (net.header.credential)","retryable":false}}
}
