import os
import re

from conan import ConanFile
from conan.tools.build import check_min_cppstd
from conan.tools.files import copy, load
from conan.tools.layout import basic_layout

required_conan_version = ">=2.0"


class XtraceConan(ConanFile):
    name = "xtrace"
    description = "tf.function for C++ tensor code: trace lambdas over xtensor values into cached, fused graphs."
    license = "BSD-3-Clause"
    topics = ("tensor", "tracing", "jit", "simd", "header-only")
    package_type = "header-library"
    settings = "os", "arch", "compiler", "build_type"
    exports_sources = "include/*", "LICENSE"
    no_copy_source = True

    def set_version(self):
        # The version lives once, in include/xtrace/config.hpp.
        text = load(self, os.path.join(self.recipe_folder, "include", "xtrace", "config.hpp"))
        parts = [re.search(rf"#define XTRACE_VERSION_{p} (\d+)", text).group(1)
                 for p in ("MAJOR", "MINOR", "PATCH")]
        self.version = ".".join(parts)

    def layout(self):
        basic_layout(self, src_folder=".")

    def requirements(self):
        # Minimums as CMakeLists.txt; tested up to xtensor 0.27.1 / xsimd 14.3.0 / xtl 0.8.2.
        self.requires("xtensor/[>=0.24.3 <0.28]")
        self.requires("xsimd/[>=8.1.0 <15]")
        self.requires("xtl/[>=0.7.2 <0.9]")
        self.requires("boost/[>=1.74.0]")

    def configure(self):
        self.options["boost/*"].header_only = True

    def package_id(self):
        self.info.clear()

    def validate(self):
        check_min_cppstd(self, 20)

    def package(self):
        copy(self, "LICENSE", self.source_folder, os.path.join(self.package_folder, "licenses"))
        copy(self, "*.hpp", os.path.join(self.source_folder, "include"),
             os.path.join(self.package_folder, "include"))

    def package_info(self):
        self.cpp_info.set_property("cmake_file_name", "xtrace")
        self.cpp_info.set_property("cmake_target_name", "xtrace::xtrace")
        self.cpp_info.set_property("pkg_config_name", "xtrace")
        self.cpp_info.bindirs = []
        self.cpp_info.libdirs = []
        self.cpp_info.requires = ["xtensor::xtensor", "xsimd::xsimd", "boost::headers"]
