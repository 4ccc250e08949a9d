package main

import (
	"context"
	"fmt"
	"net/http"
	"os"

	"connectrpc.com/connect"
	logsv1 "github.com/flowlog/flowlog/clients/go/gen/flowlog/logs/v1"
	"github.com/flowlog/flowlog/clients/go/gen/flowlog/logs/v1/logsv1connect"
	"google.golang.org/protobuf/proto"
)

// call sends the API key with one request; every RPC of every service takes it the same way.
func call[T any](message *T) *connect.Request[T] {
	request := connect.NewRequest(message)
	request.Header().Set("x-api-key", os.Getenv("FLOWLOG_API_KEY"))
	return request
}

func main() {
	ctx, workspace := context.Background(), os.Getenv("FLOWLOG_WORKSPACE")
	logs := logsv1connect.NewLogsServiceClient(http.DefaultClient, os.Getenv("FLOWLOG_URL"))
	// The five newest entries, then one of them in its detail form (workflow, spans, cost by model).
	page, err := logs.ListLogs(ctx, call(&logsv1.ListLogsRequest{WorkspaceId: workspace, Limit: proto.Int32(5)}))
	if err != nil || len(page.Msg.Data) == 0 {
		panic(fmt.Sprint("no logs: ", err))
	}
	for _, entry := range page.Msg.Data {
		fmt.Println("listed", entry.Id, entry.Level, entry.TotalDurationMs)
	}
	log, err := logs.GetLog(ctx, call(&logsv1.GetLogRequest{Id: page.Msg.Data[0].Id}))
	if err != nil {
		panic(err)
	}
	fmt.Println("got", log.Msg.Data.Id, log.Msg.Data.Workflow.GetName(), log.Msg.Data.Cost.GetTotal())
	// Entries as they are written, until stopped (D44): a heartbeat message has no entry.
	tail, err := logs.TailLogs(ctx, call(&logsv1.TailLogsRequest{WorkspaceId: workspace}))
	for err == nil && tail.Receive() {
		if entry := tail.Msg().Entry; entry != nil {
			fmt.Println("tailed", entry.Id, entry.Level)
		}
	}
	panic(fmt.Sprint("the tail ended: ", err, tail.Err()))
}
