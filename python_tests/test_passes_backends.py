"""The passes ask the Backend, never which backend it is: what XLA CPU's library
takes is left unfused on "cpu" only, and a Backend of one's own steers the passes
through the same hooks."""
from dataclasses import dataclass

from tracehlo import passes

# exp(x - max(x)) of a 64x128 f32: XLA CPU's library computes the max, its broadcast,
# the subtract and the exp in one kernel (library.py). XLA's simplifier (and
# canonicalize) drops abs(exp(...)), so the exp is both returned and read.
NORMALIZE = """
func.func @f(%x: tensor<64x128xf32>) -> (tensor<64x128xf32>, tensor<64x128xf32>) {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<64x128xf32>, tensor<f32>) -> tensor<64xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [0] : (tensor<64xf32>) -> tensor<64x128xf32>
  %d = stablehlo.subtract %x, %mb : tensor<64x128xf32>
  %e = stablehlo.exponential %d : tensor<64x128xf32>
  %n = stablehlo.negate %e : tensor<64x128xf32>
  %a = stablehlo.abs %e : tensor<64x128xf32>
  return %n, %a : tensor<64x128xf32>, tensor<64x128xf32>
}
"""

# a lone f32 sum, which XLA CPU's library computes faster than a loop fusion
SUM = """
func.func @f(%x: tensor<64x128xf32>) -> tensor<64xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<64x128xf32>, tensor<f32>) -> tensor<64xf32>
  return %s : tensor<64xf32>
}
"""


def fused_ops(result) -> list[set[str]]:
    return [set(f.ops) for f in result.report.fusions]


def test_cpu_leaves_the_library_chain_unfused_and_gpu_fuses_it():
    cpu = passes.fuse_with_report(NORMALIZE, "cpu")
    assert fused_ops(cpu) == []
    assert any(d.reason.startswith("left to XLA CPU's library: it computes the reduce")
               for d in cpu.report.rejected)
    gpu = passes.fuse_with_report(NORMALIZE, "gpu")
    assert {"stablehlo.broadcast_in_dim", "stablehlo.subtract",
            "stablehlo.exponential"} <= set.union(*fused_ops(gpu))
    assert not any("library" in d.reason for d in gpu.report.decisions)


def test_a_lone_reduce_is_the_cpu_librarys_and_a_gpu_fusion():
    cpu = passes.fuse_with_report(SUM, "cpu")
    assert fused_ops(cpu) == []
    assert [d.reason for d in cpu.report.rejected] == [
        "a reduce alone: XLA CPU's library computes it faster than a loop fusion"]
    gpu = passes.fuse_with_report(SUM, "gpu")
    assert [(f.kind, f.ops) for f in gpu.report.fusions] == [
        ("kInput", ("stablehlo.constant", "stablehlo.reduce"))]


@dataclass(frozen=True)
class KeepsReduces(passes.Backend):
    """A backend of one's own whose library takes every reduce."""

    def reserved_nodes(self, graph):
        return {i: "kept for this backend's library" for i in range(len(graph))
                if graph.name(i) == "stablehlo.reduce"}


def test_a_backend_of_ones_own_steers_the_passes_through_its_hooks():
    backend = KeepsReduces(**{**vars(passes.BACKENDS["gpu"]), "name": "mine"})
    result = passes.fuse_with_report(NORMALIZE, backend)
    assert result.report.backend == "mine"
    assert all("stablehlo.reduce" not in ops for ops in fused_ops(result))
    assert {"stablehlo.subtract", "stablehlo.exponential"} <= set.union(*fused_ops(result))
    assert any(d.reason == "kept for this backend's library" for d in result.report.rejected)
