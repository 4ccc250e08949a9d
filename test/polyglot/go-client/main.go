// Command go-client is flowlog's Go client module (clients/go, D49) calling LogsService as a Go service
// would, for test/polyglot.test.ts: over gRPC (HTTP/2 without TLS, as inside a cluster) or Connect
// (HTTP/1.1). It calls METHOD with REQUEST_JSON and the x-api-key header and prints one JSON object: the
// answer and the response headers, or the error's gRPC code and message.
//
// usage: go-client BASE_URL grpc|connect METHOD REQUEST_JSON API_KEY
package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"

	"connectrpc.com/connect"
	logsv1 "github.com/flowlog/flowlog/clients/go/gen/flowlog/logs/v1"
	"github.com/flowlog/flowlog/clients/go/gen/flowlog/logs/v1/logsv1connect"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

func main() {
	baseURL, protocol, method, requestJSON, apiKey := os.Args[1], os.Args[2], os.Args[3], os.Args[4], os.Args[5]
	client, options := http.DefaultClient, []connect.ClientOption{}
	if protocol == "grpc" {
		protocols := new(http.Protocols)
		protocols.SetUnencryptedHTTP2(true)
		client = &http.Client{Transport: &http.Transport{Protocols: protocols}}
		options = append(options, connect.WithGRPC())
	}
	logs := logsv1connect.NewLogsServiceClient(client, baseURL, options...)
	switch method {
	case "ListLogs":
		emit(call(logs.ListLogs, &logsv1.ListLogsRequest{}, requestJSON, apiKey))
	case "GetLog":
		emit(call(logs.GetLog, &logsv1.GetLogRequest{}, requestJSON, apiKey))
	default:
		panic("no such method in this test client: " + method)
	}
}

// call sends one unary request parsed from its protobuf JSON, and answers what main emits.
func call[Req, Res any](
	rpc func(context.Context, *connect.Request[Req]) (*connect.Response[Res], error),
	request *Req,
	requestJSON, apiKey string,
) map[string]any {
	if err := protojson.Unmarshal([]byte(requestJSON), any(request).(proto.Message)); err != nil {
		panic(err)
	}
	req := connect.NewRequest(request)
	req.Header().Set("x-api-key", apiKey)
	response, err := rpc(context.Background(), req)
	if err != nil {
		var refused *connect.Error
		if !errors.As(err, &refused) {
			panic(err)
		}
		return map[string]any{"error": map[string]any{"code": refused.Code().String(), "message": refused.Message()}}
	}
	answer, err := protojson.Marshal(any(response.Msg).(proto.Message))
	if err != nil {
		panic(err)
	}
	headers := map[string]string{"x-ratelimit-limit": response.Header().Get("x-ratelimit-limit")}
	return map[string]any{"response": json.RawMessage(answer), "headers": headers}
}

func emit(output map[string]any) {
	if err := json.NewEncoder(os.Stdout).Encode(output); err != nil {
		panic(err)
	}
}
