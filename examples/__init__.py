"""Example models: bundled .mlir files and the ONNX zoo builder (make_models)."""
