"""Developer scripts: the ONNX conformance report and the model-zoo comparison."""
