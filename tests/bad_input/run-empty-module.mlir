// TOOL: nnlayout-run
// ARGS: --random-inputs 0
// ERROR: error: the module has no public function with a body to run
