; The module names an import statement mentions, captured as @module.
; `import numpy as np`, `import numpy.linalg`, `from sklearn.cluster import KMeans`.
; Used by the language server's hover on imports.

(import_statement
  name: (dotted_name) @module)

(import_statement
  name: (aliased_import
    name: (dotted_name) @module))

(import_from_statement
  module_name: (dotted_name) @module)
