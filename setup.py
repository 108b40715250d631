"""pip's way into the CMake build: builds the tessera_python target and installs the package
(python/tessera/__init__.py and the extension it imports). Everything else comes from pyproject.toml.

The build tree is build/pip (Release, CUDA, GUI, MPI and the tests off), or the one named by
TESSERA_BUILD_DIR (an existing tree, configured by a preset, is only brought up to date).
"""

import os
import pathlib
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent


class CMakeBuild(build_ext):
    def build_extension(self, extension):
        build_dir = pathlib.Path(os.environ.get("TESSERA_BUILD_DIR", ROOT / "build" / "pip")).resolve()
        if not (build_dir / "CMakeCache.txt").exists():
            subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
                            f"-DTESSERA_PYTHON={sys.executable}", "-DTESSERA_ENABLE_CUDA=OFF",
                            "-DTESSERA_ENABLE_GUI=OFF", "-DTESSERA_ENABLE_MPI=OFF", "-DBUILD_TESTING=OFF"],
                           check=True)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 1))
        subprocess.run(["cmake", "--build", str(build_dir), "--target", "tessera_python", "-j", jobs], check=True)
        built = sorted((build_dir / "python" / "tessera").glob("_tessera*.so"))
        if not built:
            raise RuntimeError(f"{build_dir}: the build made no python/tessera/_tessera*.so "
                               "(is pybind11-dev installed? the configure line says 'Python module=')")
        target = pathlib.Path(self.get_ext_fullpath(extension.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[0], target)


setup(
    packages=["tessera"],
    package_dir={"tessera": "python/tessera"},
    ext_modules=[Extension("tessera._tessera", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
)
