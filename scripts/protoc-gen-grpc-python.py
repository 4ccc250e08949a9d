"""grpcio's Python stub generator as a protoc plugin, for buf.gen.clients.yaml (D49).

grpcio-tools builds grpcio's generator into its own protoc (`python -m grpc_tools.protoc
--grpc_python_out`) and installs no protoc-gen-* program, and buf runs only protoc's own generators
through protoc_path. This hands buf's request to that protoc as a descriptor set and answers with the
files it writes: the generation is grpcio's, byte for byte what `grpc_tools.protoc` gives its users.
"""

import pathlib
import sys
import tempfile

from google.protobuf import descriptor_pb2
from google.protobuf.compiler import plugin_pb2
from grpc_tools import protoc


def main() -> None:
    request = plugin_pb2.CodeGeneratorRequest.FromString(sys.stdin.buffer.read())
    response = plugin_pb2.CodeGeneratorResponse(
        supported_features=plugin_pb2.CodeGeneratorResponse.FEATURE_PROTO3_OPTIONAL
    )
    with tempfile.TemporaryDirectory() as work:
        descriptors = pathlib.Path(work, "descriptors.binpb")
        descriptors.write_bytes(descriptor_pb2.FileDescriptorSet(file=request.proto_file).SerializeToString())
        out = pathlib.Path(work, "out")
        out.mkdir()
        args = ["protoc", f"--descriptor_set_in={descriptors}", f"--grpc_python_out={out}"]
        if protoc.main([*args, *request.file_to_generate]) != 0:
            response.error = "grpc_tools.protoc failed; its message is above"
        for path in sorted(out.rglob("*.py")):
            response.file.add(name=path.relative_to(out).as_posix(), content=path.read_text("utf-8"))
    sys.stdout.buffer.write(response.SerializeToString())


if __name__ == "__main__":
    main()
