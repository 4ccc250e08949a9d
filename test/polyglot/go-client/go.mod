module flowlog.test/polyglot/go-client

go 1.26.0

require (
	connectrpc.com/connect v1.19.1
	github.com/flowlog/flowlog/clients/go v0.1.0
	google.golang.org/protobuf v1.36.12
)

require google.golang.org/genproto/googleapis/api v0.0.0-20261110000943-09e21b237f2c // indirect

replace github.com/flowlog/flowlog/clients/go => ../../../clients/go
