"""Load Triton kernels from public projects' pip packages without their runtime.

The projects (flash-linear-attention, vLLM, SGLang, Liger, Mamba-2) import
PyTorch and CUDA at module level; none of that is needed to compile a
``@triton.jit`` function for ``GPUTarget("cuda", 90, 32)`` on a CPU. This
loader imports the project's modules from an extracted wheel directory with
two changes, and nothing else:

* every module that cannot be found (``torch``, ``einops``, ...) is a
  permissive stand-in: attribute access, calls, arithmetic and comparisons
  give stand-ins, truth is False, and ``torch.cuda`` answers as one Hopper
  GPU (capability (9, 0)) so that the projects pick their Hopper paths;
* a module's top-level statements run one by one and a statement that fails
  is skipped, and a ``@triton.jit`` function keeps only its ``jit``
  decorator (autotune and heuristics wrappers are dropped: the generator
  gives the configuration that they would pick).

The kernels' own source is untouched, so the PTX is what the project's
users get for that configuration.
"""

import ast
import importlib.abc
import importlib.machinery
import os
import sys
import types

HOPPER = {
    "torch.cuda.get_device_capability": (9, 0),
    "torch.cuda.get_device_name": "NVIDIA H100 80GB HBM3",
    "torch.cuda.is_available": True,
    "torch.cuda.device_count": 1,
    "torch.version.cuda": "12.8",
    "torch.version.hip": None,
    "torch.__version__": "2.8.0",
}


class Stand:
    """A permissive stand-in value for anything the projects' runtime provides."""

    def __init__(self, path="?"):
        object.__setattr__(self, "_path", path)

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        p = f"{self._path}.{name}"
        if p in HOPPER:
            v = HOPPER[p]
            return v if isinstance(v, str) or v is None else Answer(v)
        return Stand(p)

    def __setattr__(self, name, value):
        pass

    def __call__(self, *a, **k):
        if a and callable(a[0]) and not k and len(a) == 1:
            return a[0]  # used as a decorator
        return Stand(self._path + "()")

    def __bool__(self):
        return False

    def __iter__(self):
        return iter(())

    def __len__(self):
        return 0

    def __getitem__(self, k):
        return Stand(self._path + "[]")

    def __mro_entries__(self, bases):
        return (object, )

    def __eq__(self, o):
        return o is self

    def __hash__(self):
        return id(self)

    def __int__(self):
        return 0

    def __index__(self):
        return 0

    def __float__(self):
        return 0.0

    def __str__(self):
        return ""

    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def _same(self, *a, **k):
    return self


def _false(self, *a):
    return False


for _op in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "or", "and", "xor", "neg", "pos",
            "invert", "lshift", "rshift", "matmul"):
    setattr(Stand, f"__{_op}__", _same)
    setattr(Stand, f"__r{_op}__", _same)
for _op in ("lt", "le", "gt", "ge", "ne", "contains"):
    setattr(Stand, f"__{_op}__", _false)


class Answer:
    """A function of the stand-in runtime that returns a fixed Hopper answer."""

    def __init__(self, value):
        self.value = value

    def __call__(self, *a, **k):
        return self.value


class StandModule(types.ModuleType):

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        p = f"{self.__name__}.{name}"
        if p in HOPPER:
            v = HOPPER[p]
            return v if isinstance(v, str) or v is None else Answer(v)
        return Stand(p)


def _is_jit(dec):
    src = ast.unparse(dec)
    return src.split("(")[0].split(".")[-1] == "jit"


def _strip(stmts):
    for s in stmts:
        if isinstance(s, ast.FunctionDef) and any(_is_jit(d) for d in s.decorator_list):
            s.decorator_list = [d for d in s.decorator_list if _is_jit(d)]
        for field in ("body", "orelse", "finalbody"):
            sub = getattr(s, field, None)
            if isinstance(sub, list) and not isinstance(s, (ast.FunctionDef, ast.ClassDef)):
                _strip(sub)
        if isinstance(s, ast.Try):
            for h in s.handlers:
                _strip(h.body)


class ForgivingLoader(importlib.abc.Loader):
    """Runs a project module statement by statement, skipping those that fail."""

    def __init__(self, path, pins):
        self.path, self.pins = path, pins

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        with open(self.path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), self.path)
        _strip(tree.body)
        for stmt in tree.body:
            code = compile(ast.Module(body=[stmt], type_ignores=[]), self.path, "exec")
            try:
                exec(code, module.__dict__)
            except Exception:  # noqa: BLE001 - a runtime-only statement
                pass
            # A pinned name keeps the value a Hopper machine would give it.
            for k, v in self.pins.get(module.__name__, {}).items():
                if k in module.__dict__:
                    module.__dict__[k] = v


class Finder(importlib.abc.MetaPathFinder):
    """Projects' packages from `root` with the forgiving loader; everything else missing is a stand-in."""

    def __init__(self, root, projects, pins):
        self.root, self.projects, self.pins = root, set(projects), pins

    def find_spec(self, name, path=None, target=None):
        top = name.split(".")[0]
        if top in self.projects:
            base = os.path.join(self.root, *name.split("."))
            if os.path.isdir(base):
                init = os.path.join(base, "__init__.py")
                spec = importlib.machinery.ModuleSpec(name, ForgivingLoader(init, self.pins) if os.path.exists(init) else
                                                      _EmptyLoader(), is_package=True)
                spec.submodule_search_locations = [base]
                return spec
            if os.path.exists(base + ".py"):
                return importlib.machinery.ModuleSpec(name, ForgivingLoader(base + ".py", self.pins), origin=base + ".py")
            return None
        return None


class _EmptyLoader(importlib.abc.Loader):

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        pass


class StandFinder(importlib.abc.MetaPathFinder):
    """Last on the path: a module nobody else finds becomes a stand-in."""

    def find_spec(self, name, path=None, target=None):
        return importlib.machinery.ModuleSpec(name, _StandLoader(), is_package=True)


class _StandLoader(importlib.abc.Loader):

    def create_module(self, spec):
        m = StandModule(spec.name)
        m.__path__ = []
        return m

    def exec_module(self, module):
        pass


def install(root, projects, pins=None):
    """Make `projects` importable from `root`; call after triton is imported.

    `pins` maps a module to names whose values are set after each statement
    (what the module computes from the GPU it runs on, as on a Hopper GPU).
    """
    import triton
    from triton.backends.compiler import GPUTarget

    class HopperDriver:
        """What `triton.runtime.driver.active` says on one H100; compiles never launch."""

        def get_current_target(self):
            return GPUTarget("cuda", 90, 32)

        def __getattr__(self, name):
            return Stand("driver." + name)

    triton.runtime.driver.set_active(HopperDriver())
    sys.meta_path.insert(0, Finder(root, projects, pins or {}))
    sys.meta_path.append(StandFinder())


def kernel(module, name):
    """The JITFunction `name` of `module` (imported through the loader)."""
    import importlib
    m = importlib.import_module(module)
    fn = m.__dict__.get(name)
    if fn is None:
        raise LookupError(f"{module}.{name} did not load")
    while not hasattr(fn, "arg_names") and hasattr(fn, "fn"):
        fn = fn.fn
    return fn
