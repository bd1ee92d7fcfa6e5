"""Run at interpreter start-up by the wheel's `ori-triton.pth`: when
`ORI_TRITON` is set, install ori's Triton listener as soon as Triton is
imported, in every Python process (`torch.compile`'s workers included).

Unset, it costs one environment lookup. Set, it does not import Triton
itself (that is the program's choice and order): it waits for the
program's `import triton` and installs the listener right after it.
"""

import os
import sys

_OFF = ("", "0", "off", "false", "no")


def _install():
    """Install the hook; a failure of ori's is reported, never raised into
    the program's `import triton`."""
    try:
        from ori.triton import install_from_env

        install_from_env()
    except Exception as e:  # noqa: BLE001 - the user's import must not fail
        print(f"ori: ORI_TRITON is set but the Triton hook could not be installed: {e}", file=sys.stderr)


class _AfterTriton:
    """A meta-path finder that lets `triton` load as usual, then installs
    the listener."""

    def find_spec(self, name, path=None, target=None):
        if name != "triton":
            return None
        import importlib.util

        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        spec.loader = _Loader(spec.loader)
        return spec


class _Loader:
    def __init__(self, inner):
        self.inner = inner

    def create_module(self, spec):
        return self.inner.create_module(spec)

    def exec_module(self, module):
        # Triton's own modules expect their real loader on the spec.
        module.__spec__.loader = self.inner
        module.__loader__ = self.inner
        self.inner.exec_module(module)
        _install()

    def __getattr__(self, attr):
        return getattr(self.inner, attr)


if os.environ.get("ORI_TRITON", "").strip().lower() not in _OFF:
    if "triton" in sys.modules:
        _install()
    elif not any(isinstance(f, _AfterTriton) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterTriton())
