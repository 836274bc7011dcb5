# Every error is one line naming the user's file and line, exit status 1, no traceback.
# RUN: not hlo-dump %S/no_such_file.py 2>&1 | FileCheck %s --check-prefix=MISSING
# MISSING: hlo-dump: error: no such file: {{.*}}no_such_file.py
# MISSING-NOT: Traceback

# RUN: not hlo-dump %S/../Inputs/hlo_dump/syntax_error.py -f f --args 'f32[3]' 2>&1 | FileCheck %s --check-prefix=SYNTAX
# SYNTAX: hlo-dump: error: {{.*}}syntax_error.py:2: SyntaxError: invalid syntax
# SYNTAX-NOT: Traceback

# RUN: not hlo-dump %S/../Inputs/hlo_dump/raises.py -f f 2>&1 | FileCheck %s --check-prefix=RAISES
# RAISES: hlo-dump: error: {{.*}}raises.py:2: RuntimeError: module-level failure

# RUN: not hlo-dump %S/../Inputs/hlo_dump/bad_if.py -f nope 2>&1 | FileCheck %s --check-prefix=NOFN
# NOFN: hlo-dump: error: {{.*}}bad_if.py: no function named 'nope' (functions: branchy, shapes)

# RUN: not hlo-dump %S/../Inputs/hlo_dump/bad_if.py -f branchy --args 'f32[3' 2>&1 | FileCheck %s --check-prefix=SPEC
# SPEC: hlo-dump: error: bad argument spec 'f32[3': expected DTYPE[DIMS] like f32[8,4] or i32[]

# RUN: not hlo-dump %S/../Inputs/hlo_dump/bad_if.py -f branchy 2>&1 | FileCheck %s --check-prefix=TRACE
# TRACE: hlo-dump: error: {{.*}}bad_if.py:7: a Python `if`, `while`, `and`/`or` or bool() needs a concrete value, but this is a traced bool[]. Use tracehlo.numpy.where
# TRACE-NOT: Traceback

# RUN: not hlo-dump %S/../Inputs/hlo_dump/bad_if.py -f shapes 2>&1 | FileCheck %s --check-prefix=SHAPES
# SHAPES: hlo-dump: error: {{.*}}bad_if.py:13: shapes (3,), (4,) cannot be broadcast together
# SHAPES-NOT: Traceback
