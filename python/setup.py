"""python/setup.py - pip install --no-build-isolation ./python

Builds the extension with cffi's setuptools hook from
bloomcrawl_build.py (the C sources of the modules it binds are compiled
in, from the directory above this one: install from a checkout, not from
a copy of python/ alone). Offline: --no-build-isolation uses the
installed setuptools and cffi (Debian's python3-setuptools, python3-cffi)
instead of downloading them. See docs/DESIGN.md 16.
"""
import os
import re

from setuptools import setup

HERE = os.path.dirname(os.path.abspath(__file__))
# The project's version, from project(... VERSION x.y.z) of CMakeLists.txt.
with open(os.path.join(HERE, "..", "CMakeLists.txt")) as f:
    VERSION = re.search(r"project\(bloomcrawl VERSION ([0-9.]+)",
                        f.read()).group(1)

setup(
    name="bloomcrawl",
    version=VERSION,
    description="bloomcrawl's URL normalization, Bloom filters, seen-test, "
                "robots.txt and link extraction, from Python",
    packages=["bloomcrawl"],
    package_data={"bloomcrawl": ["py.typed"]},
    cffi_modules=["bloomcrawl_build.py:ffibuilder"],
    install_requires=["cffi>=1.15"],
    python_requires=">=3.9",
    zip_safe=False,
)
