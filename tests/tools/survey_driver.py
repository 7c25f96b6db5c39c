# survey_driver.py — what the survey scripts share (survey_models3.py, survey_models4.py, survey_models5.py): the
# parent runs each model in its own python process under TORCH_TRACE (JOBS at a time, default 4), the child
# compiles one model with run() and prints "ok". Run on the GPU machine through a survey script:
#   OUT=/path python3 tests/tools/survey_models4.py
import os, sys, subprocess
from concurrent.futures import ThreadPoolExecutor


def main(script, models, default_out):
    """In the parent (no argument): every model of `models` through `script NAME`, each with
    TORCH_TRACE=OUT/logs/NAME; prints one line per model (rc, and the last line on failure).
    Returns the model name in a child, or None after the parent is done."""
    if len(sys.argv) > 1:
        return sys.argv[1]
    out = os.environ.get("OUT", default_out)
    os.makedirs(f"{out}/logs", exist_ok=True)

    def one(m):
        env = dict(os.environ, TORCH_TRACE=f"{out}/logs/{m}")
        try:
            r = subprocess.run([sys.executable, script, m], env=env, capture_output=True, text=True, timeout=400)
            return f"{m} rc {r.returncode} {(r.stdout + r.stderr).strip().splitlines()[-1:] if r.returncode else ''}"
        except subprocess.TimeoutExpired:
            return f"{m} timeout"

    with ThreadPoolExecutor(int(os.environ.get("JOBS", "4"))) as ex:
        for line in ex.map(one, models):
            print(line, flush=True)
    return None


def make_run(dev, dynamic_ok=True):
    """run(m, *xs, train=, dtype=, dynamic=): torch.compile m (a module or a function) on dev,
    call it, run a backward of the summed outputs when train, call again on batch-doubled
    float inputs when dynamic; prints ok."""
    import torch, torch.nn as nn

    def run(m, *xs, train=False, dtype=None, dynamic=None):
        if isinstance(m, nn.Module):
            m = m.to(dev)
            if dtype:
                m = m.to(dtype)
        cm = torch.compile(m, dynamic=dynamic)
        y = cm(*xs)
        if train:
            (y.float().sum() if isinstance(y, torch.Tensor) else sum(t.float().sum() for t in y)).backward()
        if dynamic:
            cm(*[torch.cat([x, x], 0) if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in xs])
        print("ok")
    return run


def compile_call(fn, *xs, train=False, **kw):
    """torch.compile(fn, **kw) called on xs (a backward of the summed outputs when train); prints ok.
    For models that need compile options (mode=, options=, fullgraph=) run() does not pass."""
    import torch
    cm = torch.compile(fn, **kw)
    y = cm(*xs)
    if train:
        (y.float().sum() if isinstance(y, torch.Tensor) else sum(t.float().sum() for t in y)).backward()
    print("ok")


def child(script, models, default_out):
    """The setup every survey script repeats: in the parent run `models` (main) and exit; in a
    child return (name, dev, run, X): the model's name, its device ("cpu" for cpu_* names, else
    "cuda"), make_run(dev), and X(*sizes, dt=float32) -> torch.randn on dev. Seeds torch with 0."""
    name = main(script, models, default_out)
    if name is None:
        sys.exit(0)
    import torch
    torch.manual_seed(0)
    dev = "cpu" if name.startswith("cpu") else "cuda"
    return name, dev, make_run(dev), (lambda *s, dt=torch.float32: torch.randn(*s, device=dev, dtype=dt))
