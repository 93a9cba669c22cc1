// ERROR: {file}:2:1: error: Operation this is not registered
this is not MLIR at all {{ ]]
