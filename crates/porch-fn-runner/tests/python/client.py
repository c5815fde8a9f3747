"""A client of porch-fn-runner generated from Porch's proto by grpcio-tools.

usage: client.py PROTO_DIR WORK_DIR ADDRESS eval IMAGE INPUT_FILE
       client.py PROTO_DIR WORK_DIR ADDRESS health [SERVICE]
Prints one JSON object on stdout.
"""
import json
import os
import sys

from grpc_tools import protoc

proto_dir, work_dir, address, command = sys.argv[1:5]
rc = protoc.main([
    "grpc_tools.protoc",
    f"-I{proto_dir}",
    f"--python_out={work_dir}",
    f"--grpc_python_out={work_dir}",
    os.path.join(proto_dir, "evaluator.proto"),
])
if rc != 0:
    sys.exit(f"protoc failed: {rc}")
sys.path.insert(0, work_dir)

import grpc  # noqa: E402
import evaluator_pb2  # noqa: E402
import evaluator_pb2_grpc  # noqa: E402
from grpc_health.v1 import health_pb2, health_pb2_grpc  # noqa: E402

channel = grpc.insecure_channel(address)
if command == "eval":
    image, input_file = sys.argv[5:7]
    with open(input_file, "rb") as f:
        request = evaluator_pb2.EvaluateFunctionRequest(
            resource_list=f.read(), image=image, Tag="python-client")
    stub = evaluator_pb2_grpc.FunctionEvaluatorStub(channel)
    try:
        response = stub.EvaluateFunction(request, timeout=60)
        print(json.dumps({
            "ok": True,
            "resource_list": response.resource_list.decode(),
            "log": response.log.decode(),
        }))
    except grpc.RpcError as e:
        print(json.dumps({"ok": False, "code": e.code().name, "details": e.details()}))
elif command == "health":
    service = sys.argv[5] if len(sys.argv) > 5 else ""
    stub = health_pb2_grpc.HealthStub(channel)
    response = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=10)
    print(json.dumps({
        "ok": True,
        "status": health_pb2.HealthCheckResponse.ServingStatus.Name(response.status),
    }))
else:
    sys.exit(f"unknown command {command}")
