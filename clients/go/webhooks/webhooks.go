// Package webhooks verifies a flowlog webhook signed the service's own way (the default
// signatureScheme). A webhook with signatureScheme "standard" is verified with Standard Webhooks'
// own Go library instead (D39), as the README's receiver does.
//
// service-signature is "t=<ms>,v1=<hex>": the lowercase hex HMAC-SHA256 of "<t>.<body>" keyed with the
// subscription's secret, where t equals service-timestamp (spec "Authentication" 3, D19). While a rotated
// secret is in its grace period the header carries one v1 per secret (D33); any match verifies.
package webhooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Tolerance is how far a delivery's timestamp may be from now: each attempt is signed anew, so a
// delivery older than this is a replay.
const Tolerance = 5 * time.Minute

// Verify reports whether body, the raw bytes received, carries a valid signature made within Tolerance
// of now. Answer 401 when it does not.
func Verify(secret string, body []byte, header http.Header) bool {
	timestamp := header.Get("service-timestamp")
	parts := strings.Split(strings.TrimSpace(header.Get("service-signature")), ",")
	ms, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil || parts[0] != "t="+timestamp {
		return false
	}
	if age := time.Since(time.UnixMilli(ms)); age > Tolerance || age < -Tolerance {
		return false
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(timestamp + "."))
	mac.Write(body)
	expected := mac.Sum(nil)
	verified := false
	// Every candidate is compared, so the time taken does not tell which one matched.
	for _, part := range parts[1:] {
		signature, err := hex.DecodeString(strings.TrimPrefix(part, "v1="))
		if strings.HasPrefix(part, "v1=") && err == nil && hmac.Equal(signature, expected) {
			verified = true
		}
	}
	return verified
}
