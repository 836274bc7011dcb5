"""The record of what the passes did and why: every candidate, fused or not."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable


_FILE_LOC = re.compile(r'^loc\("([^"]*)":(\d+):(\d+)\)$')


def short_loc(op) -> str:
    """`file:line:col` for a file location, else MLIR's own spelling."""
    return _short(op.location)


def _short(location) -> str:
    text = str(location)
    match = _FILE_LOC.match(text)
    return ":".join(match.groups()) if match else text


def where(op) -> tuple:
    """`op` as a decision names it, before it is said (FusionReport.decisions): its
    name and its location's attribute (uniqued while the context lives, so it
    outlives an erased op)."""
    return op.operation.name, op.location.attr


@dataclass(frozen=True)
class Decision:
    """One candidate a pass looked at."""
    pass_name: str
    fused: bool
    ops: tuple[str, ...]   # `op_name @ file:line:col`: producer first, or the siblings
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
        self.add(pass_name, fused, tuple(where(op) for op in ops), reason)

    def add(self, pass_name: str, fused: bool, ops: tuple[tuple, ...], reason: str) -> None:
        """A Decision on ops given by `where`, said once: passes iterate to a fixed
        point (compared as fields, so a repeated one costs no Decision). The ops are
        described when `decisions` is read: most compiles never read it, and
        describing cost 4% of the passes (train step)."""
        fields = (pass_name, fused, ops, reason)
        if fields not in self._seen:
            self._seen.add(fields)
            self._added.append(fields)

    @property
    def decisions(self) -> list[Decision]:
        """Every decision so far, in the order the passes made them."""
        for pass_name, fused, ops, reason in self._added[len(self._decisions):]:
            described = tuple(f"{name} @ {self._short_loc(loc)}" for name, loc in ops)
            self._decisions.append(Decision(pass_name, fused, described, reason))
        return self._decisions

    def _short_loc(self, location) -> str:
        """short_loc of a location, kept: ops share few (one per source line), and
        printing one costs 3 us."""
        if location not in self._locations:
            self._locations[location] = _short(location)
        return self._locations[location]

    def __post_init__(self):
        self._seen: set[tuple] = set()
        self._added: list[tuple] = []
        self._decisions: list[Decision] = []
        self._locations: dict = {}  # location attribute -> short_loc's text
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
