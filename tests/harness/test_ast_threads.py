"""fixes.ast_threads: AST conversions run one thread at a time; bytecode compiles do not wait."""

from __future__ import annotations

import ast
import builtins
import threading
import time

from sfn_patterns_localstack.emulation.fixes import ast_threads


def _overlap(source: object, flags: int) -> int:
    """Most calls of a slow stand-in for ``compile`` inside it at once, over 4 threads."""
    inside, most = 0, 0
    guard = threading.Lock()

    def slow(*_args, **_kwargs):
        nonlocal inside, most
        with guard:
            inside += 1
            most = max(most, inside)
        time.sleep(0.05)
        with guard:
            inside -= 1

    compile_ = ast_threads.serialised(slow)
    threads = [
        threading.Thread(target=compile_, args=(source, "<t>", "exec", flags)) for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return most


def test_ast_conversions_never_overlap() -> None:
    assert _overlap("x = 1", ast.PyCF_ONLY_AST) == 1  # ast.parse's way in
    assert _overlap(ast.parse("x = 1"), 0) == 1  # an AST compiled to bytecode


def test_source_compiled_to_bytecode_takes_no_lock() -> None:
    assert _overlap("x = 1", 0) > 1


def test_applied_compile_keeps_its_behaviour() -> None:
    assert ast_threads.apply() is True
    assert ast_threads.apply() is True  # once: not wrapped twice
    assert getattr(builtins.compile, "_sfnp_serialised", False)
    assert not getattr(builtins.compile.__wrapped__, "_sfnp_serialised", False)
    assert ast.literal_eval('"a\\tb"') == "a\tb"
    assert isinstance(ast.parse("f(x)", mode="eval"), ast.Expression)
    namespace: dict = {}
    exec(builtins.compile(ast.parse("y = 2 + 3"), "<t>", "exec"), namespace)
    assert namespace["y"] == 5
