"""What openapi-python-client generated for each operation and each schema of an OpenAPI document.

Usage: inspect_client.py DOCUMENT PACKAGE_DIR. Prints JSON: per operationId, whether its module has the
four functions and the classes `sync` answers with besides Problem and None; per schema name, its model
class or null. Modules and classes are looked up by the generator's own naming (its `strings` module, with
its default field prefix), so the test can hold them to the document's own lists.
"""

import importlib
import json
import sys
import typing
from pathlib import Path

from openapi_python_client.strings import ClassName, PythonIdentifier

PREFIX = "field_"
METHODS = ("get", "put", "post", "delete", "patch")
FUNCTIONS = ("sync", "sync_detailed", "asyncio", "asyncio_detailed")


def answer_names(function) -> list[str]:
    answer = typing.get_type_hints(function)["return"]
    members = typing.get_args(answer) or (answer,)
    return sorted(m.__name__ for m in members if m is not type(None) and m.__name__ != "Problem")


def operation_report(package: str, operation: dict) -> dict:
    tag = PythonIdentifier((operation.get("tags") or ["default"])[0], "tag")
    name = PythonIdentifier(operation["operationId"], PREFIX)
    try:
        module = importlib.import_module(f"{package}.api.{tag}.{name}")
    except ModuleNotFoundError:
        return {"functions": False, "answers": []}
    functions = all(callable(getattr(module, f, None)) for f in FUNCTIONS)
    return {"functions": functions, "answers": answer_names(module.sync) if functions else []}


def main() -> None:
    document = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    package_dir = Path(sys.argv[2]).resolve()
    sys.path.insert(0, str(package_dir.parent))
    package = package_dir.name
    models = importlib.import_module(f"{package}.models")
    operations = {
        operation["operationId"]: operation_report(package, operation)
        for item in document["paths"].values()
        for method, operation in item.items()
        if method in METHODS
    }
    schemas = {}
    for name in document["components"]["schemas"]:
        class_name = ClassName(name, PREFIX)
        schemas[name] = class_name if hasattr(models, class_name) else None
    print(json.dumps({"operations": operations, "schemas": schemas}))


main()
