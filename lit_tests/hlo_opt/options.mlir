// RUN: hlo-opt %s --fuse --print-ir-after-all 2>&1 | FileCheck %s --check-prefix=ALL
// RUN: hlo-opt %s --fuse --print-ir-after=fusion-merger 2>&1 >/dev/null | FileCheck %s --check-prefix=ONE
// RUN: hlo-opt %s --fuse --mlir-print-debuginfo | FileCheck %s --check-prefix=LOC
// RUN: hlo-opt %s --fuse --backend=gpu | FileCheck %s --check-prefix=GPU
// RUN: hlo-opt %s --fuse --fusion-report 2>&1 >/dev/null | FileCheck %s --check-prefix=REPORT
// hlo-dump's old spellings of the same flags:
// RUN: hlo-opt %s --fuse --explain --print-after-all 2>&1 >/dev/null | FileCheck %s --check-prefixes=ALL,REPORT

// ALL: // -----// IR Dump After inline-calls //----- //
// ALL: // -----// IR Dump After canonicalize //----- //
// ALL-NOT: mhlo.fusion
// ALL: // -----// IR Dump After instruction-fusion //----- //
// ALL: // -----// IR Dump After fusion-merger //----- //
// ALL: // -----// IR Dump After sibling-fusion //----- //
// ALL: // -----// IR Dump After producer-consumer-fusion //----- //
// ALL: func.func @softmax

// ONE-NOT: IR Dump After {{inline-calls|canonicalize|instruction-fusion}}
// ONE: // -----// IR Dump After fusion-merger //----- //
// ONE-NOT: IR Dump After

// Fusion keeps every source location of the ops it groups. (f16 throughout: XLA CPU
// hands an f32 softmax to its library instead, see passes/library-chains.mlir.)
// LOC: #[[SUB:loc[0-9]+]] = loc("softmax.py":6:5)
// LOC: #[[EXP:loc[0-9]+]] = loc("softmax.py":7:3)
// LOC: #[[FUSED:loc[0-9]+]] = loc(fused[{{.*}}#[[SUB]], #[[EXP]]])
// LOC: }) : (tensor<64x128xf16>, tensor<64xf16>) -> tensor<64x128xf16> loc(#[[FUSED]])

// On GPU a reduction root makes an input fusion.
// GPU: fusion_kind kInput

// REPORT: fusion report (cpu): 4 fusions
// REPORT: kLoop fusion of {{.*}}stablehlo.subtract, stablehlo.exponential{{.*}}softmax.py:7:3
// REPORT: decisions:
// REPORT: [instruction-fusion] not fused: stablehlo.exponential {{.*}}fusing would duplicate it
// REPORT: [fusion-merger] not fused: {{.*}}cannot merge into stablehlo.reduce_window: stablehlo.reduce_window stays its own kernel
func.func @softmax(%x: tensor<64x128xf16>) -> tensor<64x128xf16> {
  %ninf = stablehlo.constant dense<0xFC00> : tensor<f16> loc("softmax.py":3:3)
  %zero = stablehlo.constant dense<0.0> : tensor<f16> loc("softmax.py":4:3)
  %max = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<64x128xf16>, tensor<f16>) -> tensor<64xf16> loc("softmax.py":5:3)
  %maxb = stablehlo.broadcast_in_dim %max, dims = [0] : (tensor<64xf16>) -> tensor<64x128xf16> loc("softmax.py":6:3)
  %sub = stablehlo.subtract %x, %maxb : tensor<64x128xf16> loc("softmax.py":6:5)
  %exp = stablehlo.exponential %sub : tensor<64x128xf16> loc("softmax.py":7:3)
  %sum = stablehlo.reduce(%exp init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<64x128xf16>, tensor<f16>) -> tensor<64xf16> loc("softmax.py":8:3)
  %sumb = stablehlo.broadcast_in_dim %sum, dims = [0] : (tensor<64xf16>) -> tensor<64x128xf16> loc("softmax.py":9:3)
  %div = stablehlo.divide %exp, %sumb : tensor<64x128xf16> loc("softmax.py":9:5)
  return %div : tensor<64x128xf16>
}
