"""tf2onnx emits Erfc (not an ONNX op) for Keras's exact GELU, and ONNX Runtime refuses the graph.
replace_erfc rewrites each Erfc(x) as Sub(1, Erf(x)), the same function, in place, so ONNX Runtime
can run the model (models.py applies it to every conversion).
  python bench/untuned/fix_erfc.py model.onnx ..."""
import sys

import numpy as np


def replace_erfc(path):
    import onnx
    from onnx import helper, numpy_helper
    m = onnx.load(path)
    g = m.graph
    new, n = [], 0
    for node in g.node:
        if node.op_type == "Erfc":
            t = node.output[0] + "_erf"
            new.append(helper.make_node("Erf", [node.input[0]], [t], name=node.name + "_erf"))
            new.append(helper.make_node("Sub", ["erfc_fix_one", t], list(node.output),
                                        name=node.name + "_sub"))
            n += 1
        else:
            new.append(node)
    if n:
        g.initializer.append(numpy_helper.from_array(np.array(1.0, np.float32), "erfc_fix_one"))
        del g.node[:]
        g.node.extend(new)
        onnx.checker.check_model(m)
        onnx.save(m, path)
    return n


if __name__ == "__main__":
    for p in sys.argv[1:]:
        print(p, "Erfc replaced:", replace_erfc(p))
