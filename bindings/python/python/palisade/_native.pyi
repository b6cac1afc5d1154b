# Types of the native module (bindings/python/src), which palisade/_palisade.py wraps.
from typing import Any, Callable, List, Optional, Tuple

class NativeError(Exception): ...

class NativePolicy:
    @staticmethod
    def read(spec: str) -> NativePolicy: ...
    @property
    def name(self) -> str: ...
    @property
    def sha256(self) -> str: ...

class NativeScript:
    @staticmethod
    def from_source(name: str, source: str) -> NativeScript: ...
    @staticmethod
    def from_file(path: str) -> NativeScript: ...
    @staticmethod
    def from_component(wasm: bytes) -> NativeScript: ...
    @property
    def name(self) -> str: ...

class Mailbox:
    def __init__(self) -> None: ...
    def fileno(self) -> int: ...
    def drain(self) -> List[Tuple[int, int, str]]: ...

class NativeCall:
    def cancel(self) -> None: ...

class NativePalisade:
    def __init__(
        self, settings: str, names: List[str], invoke: Callable[[str, str, Callable[[str], None]], None]
    ) -> None: ...
    def run(
        self,
        request: str,
        policy: Optional[NativePolicy],
        script: Optional[NativeScript],
        on_event: Optional[Callable[[str], None]],
    ) -> str: ...
    def start(
        self,
        request: str,
        policy: Optional[NativePolicy],
        script: Optional[NativeScript],
        events: bool,
        mailbox: Mailbox,
        id: int,
    ) -> NativeCall: ...
