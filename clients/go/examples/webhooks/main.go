package main

import (
	"cmp"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/flowlog/flowlog/clients/go/webhooks"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// One receiver for both signature schemes a subscription can choose (D39).
func main() {
	standard, err := standardwebhooks.NewWebhook(os.Getenv("STANDARD_WEBHOOK_SECRET"))
	if err != nil {
		panic(err)
	}
	http.HandleFunc("POST /", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var verified bool
		if r.Header.Get("webhook-signature") != "" {
			// signatureScheme "standard": Standard Webhooks' own verifier, with the whsec_ secret.
			verified = standard.Verify(body, r.Header) == nil
		} else {
			// signatureScheme "service" (the default): service-signature, t=<ms>,v1=<hex>.
			verified = webhooks.Verify(os.Getenv("FLOWLOG_WEBHOOK_SECRET"), body, r.Header)
		}
		fmt.Println(map[bool]string{true: "verified", false: "rejected"}[verified], r.Header.Get("idempotency-key"), len(body))
		w.WriteHeader(map[bool]int{true: http.StatusNoContent, false: http.StatusUnauthorized}[verified])
	})
	panic(http.ListenAndServe("127.0.0.1:"+cmp.Or(os.Getenv("PORT"), "4000"), nil))
}
