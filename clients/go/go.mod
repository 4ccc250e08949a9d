module github.com/flowlog/flowlog/clients/go

go 1.26.0

require (
	connectrpc.com/connect v1.19.1
	github.com/standard-webhooks/standard-webhooks/libraries v1.3.0
	google.golang.org/genproto/googleapis/api v0.0.0-20261110000943-09e21b237f2c
	google.golang.org/protobuf v1.36.12
)
