"""close_to.py GOT WANT TOL: exits 1 unless the arrays in two .npy files agree within TOL
(max |got - want| / max(1, |want|)); prints the error."""
import sys

import numpy as np

got, want = (np.load(p).astype(np.float64) for p in sys.argv[1:3])
err = float(np.max(np.abs(got - want) / np.maximum(1.0, np.abs(want))))
print("max relative error", err)
sys.exit(0 if got.shape == want.shape and err <= float(sys.argv[3]) else 1)
