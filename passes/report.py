"""The record of what the passes did and why: every candidate, fused or not."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable


_FILE_LOC = re.compile(r'^loc\("([^"]*)":(\d+):(\d+)\)$')


def short_loc(op, memo: dict | None = None) -> str:
    """`file:line:col` for a file location, else MLIR's own spelling. `memo` keeps
    it per location: ops share few (one per source line), and a location is an
    attribute, uniqued while its context lives, where printing it costs 3 us."""
    if memo is not None:
        key = op.location.attr
        if key not in memo:
            memo[key] = short_loc(op)
        return memo[key]
    text = str(op.location)
    match = _FILE_LOC.match(text)
    return ":".join(match.groups()) if match else text


def describe(op, memo: dict | None = None) -> str:
    """`op` as a decision names it; `memo` as short_loc's."""
    return f"{op.operation.name} @ {short_loc(op, memo)}"


@dataclass(frozen=True)
class Decision:
    """One candidate a pass looked at."""
    pass_name: str
    fused: bool
    ops: tuple[str, ...]   # `describe`d ops: producer first, or the siblings
    reason: str

    def __str__(self) -> str:
        verdict = "fused" if self.fused else "not fused"
        return f"[{self.pass_name}] {verdict}: {' + '.join(self.ops)}: {self.reason}"


@dataclass(frozen=True)
class FusionInfo:
    """One mhlo.fusion of the final module."""
    function: str
    kind: str
    ops: tuple[str, ...]        # op names in the fused region
    locations: tuple[str, ...]  # source locations of the fused ops
    bytes_saved: int            # modelled: ops as separate kernels minus the fusion

    def __str__(self) -> str:
        return (f"@{self.function}: {self.kind} fusion of {len(self.ops)} ops "
                f"({', '.join(self.ops)}), saves {self.bytes_saved} bytes; "
                f"locations: {', '.join(self.locations)}")


@dataclass
class FusionReport:
    backend: str
    decisions: list[Decision] = field(default_factory=list)
    # why the fused module did not run (tracehlo.jit then compiles with XLA's fusion)
    fallback: str | None = None
    # what `fusions` is made by, when first read: describing every fusion costs as much
    # as a pass, and most compiles never read it (fusion_report(), hlo-dump do)
    fusions_from: Callable[[], list[FusionInfo]] = field(default=list, repr=False)

    @property
    def fusions(self) -> list[FusionInfo]:
        """The final module's fusions."""
        if self._fusions is None:
            self._fusions = self.fusions_from()
        return self._fusions

    def record(self, pass_name: str, fused: bool, ops, reason: str) -> None:
        self.add(pass_name, fused, tuple(describe(op) for op in ops), reason)

    def add(self, pass_name: str, fused: bool, ops: tuple[str, ...], reason: str) -> None:
        """A Decision on `describe`d ops, said once: passes iterate to a fixed point
        (compared as fields, so a repeated one costs no Decision)."""
        fields = (pass_name, fused, ops, reason)
        if fields not in self._seen:
            self._seen.add(fields)
            self.decisions.append(Decision(*fields))

    def __post_init__(self):
        self._seen: set[tuple] = set()
        self._fusions: list[FusionInfo] | None = None

    @property
    def rejected(self) -> list[Decision]:
        return [d for d in self.decisions if not d.fused]

    @property
    def bytes_saved(self) -> int:
        return sum(f.bytes_saved for f in self.fusions)

    def __str__(self) -> str:
        lines = [f"fusion report ({self.backend}): {len(self.fusions)} fusions, "
                 f"{self.bytes_saved} bytes saved"]
        if self.fallback:
            lines.append(f"NOT USED, XLA's fusion ran instead: {self.fallback}")
        lines += [f"  {f}" for f in self.fusions]
        lines += ["decisions:"] + [f"  {d}" for d in self.decisions]
        return "\n".join(lines)
