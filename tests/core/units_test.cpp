// Bandwidths with their unit (core/units.hpp): values worked out by hand from the SI prefixes
// (k = 1e3 ... P = 1e15) and 8 bits to the byte, the deprecated GB/s numbers, the errors, and
// the once-per-run deprecation note.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>

#include "tessera/core/deprecation.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/hardware_presets.hpp"
#include "tessera/core/units.hpp"

using namespace tessera;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {
double bandwidth(const std::string& text) { return parse_bandwidth_bytes_per_s(text, "--bandwidth"); }
}  // namespace

TEST_CASE("bytes per second: B is a byte, b a bit, prefixes are powers of ten", "[units]") {
  CHECK(bandwidth("50GB/s") == 50e9);
  CHECK(bandwidth("900GB/s") == 900e9);
  CHECK(bandwidth("3.35TB/s") == 3.35e12);
  CHECK(bandwidth("1PB/s") == 1e15);
  CHECK(bandwidth("2MB/s") == 2e6);
  CHECK(bandwidth("1kB/s") == 1e3);
  CHECK(bandwidth("1KB/s") == 1e3);  // K taken for k
  CHECK(bandwidth("7B/s") == 7);
  // Bits: 400e9 bits / 8 = 50e9 bytes; 100e6 / 8 = 12.5e6; 8 bits = 1 byte.
  CHECK(bandwidth("400Gb/s") == 50e9);
  CHECK(bandwidth("100Mb/s") == 12.5e6);
  CHECK(bandwidth("8b/s") == 1);
  CHECK(bandwidth("1Tb/s") == 125e9);
}

TEST_CASE("the spellings of one bandwidth give the same double", "[units]") {
  // The network people's and the memory people's way of writing a 400 Gb/s NIC.
  for (const char* text : {"400Gb/s", "400Gbit/s", "400Gbps", "400 Gb/s", " 400Gb/s ", "50GB/s", "50GByte/s",
                           "50GBps", "5e1GB/s", "0.4Tb/s", "+50GB/s", "50.0GB/s", "400000Mb/s"}) {
    INFO(text);
    CHECK(bandwidth(text) == 50e9);
  }
  CHECK(bandwidth("3.35TB/s") == bandwidth("3350GB/s"));
  CHECK(bandwidth("3.35TB/s") == bandwidth("26.8Tb/s"));  // 3.35 x 8
}

TEST_CASE("NUMBER GB/s is the deprecated bare number of GB/s, bit for bit", "[units]") {
  // The old `_gbps` fields and flags computed gbps * 1e9; these values include ones (0.3, 33.3)
  // whose decimal is not a double, where a different order of operations would differ.
  for (double gbps : {50.0, 3350.0, 450.0, 12.5, 0.3, 33.3, 1e-3}) {
    std::ostringstream text;
    text.precision(17);
    text << gbps << "GB/s";
    INFO(text.str());
    CHECK(bandwidth(text.str()) == gbps * 1e9);
    CHECK(bandwidth(text.str()) == gbps * kBytesPerSecondPerGBps);
  }
}

TEST_CASE("a bandwidth without a known unit is refused with a message naming the flag", "[units]") {
  struct Case {
    const char* text;
    const char* says;
  };
  const Case cases[] = {
      {"", "got nothing"},
      {"50", "'50' has no unit: write 50GB/s (bytes per second) or 50Gb/s (bits per second)"},
      {"fast", "expected a bandwidth with its unit"},
      {"GB/s", "expected a bandwidth with its unit"},
      {"50GiB/s", "binary prefix"},
      {"50GB", "unknown unit"},
      {"50gb/s", "unknown unit"},
      {"50G", "unknown unit"},
      {"50GB/s/s", "unknown unit"},
      {"50 GB/s x", "unknown unit"},
      {"0GB/s", "is not a positive bandwidth"},
      {"-5GB/s", "is not a positive bandwidth"},
      {"1e400GB/s", "out of range"},
  };
  for (const Case& entry : cases) {
    INFO("'" << entry.text << "'");
    REQUIRE_THROWS_AS(bandwidth(entry.text), UserError);
    REQUIRE_THROWS_WITH(bandwidth(entry.text), StartsWith("--bandwidth: ") && Contains(entry.says));
  }
  REQUIRE_THROWS_WITH(parse_bandwidth_bytes_per_s("9", "links[3].bandwidth"), StartsWith("links[3].bandwidth: "));
}

TEST_CASE("a bare number is told from a bandwidth with a unit", "[units]") {
  for (const char* text : {"50", " 12.5 ", "5e1", "-3", ".5"}) CHECK(is_bare_number(text));
  for (const char* text : {"", "50GB/s", "abc", "5e", "1.2.3", "e5"}) CHECK_FALSE(is_bare_number(text));
}

TEST_CASE("bandwidths print in GB/s", "[units]") {
  CHECK(format_bandwidth(50e9) == "50GB/s");
  CHECK(format_bandwidth(3.35e12) == "3350GB/s");
  CHECK(format_bandwidth(12.5e6) == "0.0125GB/s");
}

TEST_CASE("the default network link is the 400 Gb/s InfiniBand NIC its comment names", "[units][presets]") {
  CHECK(kDefaultNetworkLink.bytes_per_s == bandwidth("400Gb/s"));
  CHECK(kH100.hbm_bytes_per_s == bandwidth("3.35TB/s"));
  CHECK(kH200.hbm_bytes_per_s == bandwidth("4.8TB/s"));
  CHECK(kA100.hbm_bytes_per_s == bandwidth("2039GB/s"));
}

TEST_CASE("a deprecation note is printed once per key", "[units][deprecation]") {
  std::ostringstream out;
  CHECK(note_deprecated("units_test:first", "--old is deprecated", out));
  CHECK_FALSE(note_deprecated("units_test:first", "--old is deprecated", out));
  CHECK(out.str() == "tessera: note: --old is deprecated\n");
  CHECK(note_deprecated("units_test:second", "--older too", out));
  CHECK(out.str() == "tessera: note: --old is deprecated\ntessera: note: --older too\n");
}

// Counts and sizes (core/units.hpp): a bare K, M, G, T is a power of 1024; a byte unit with a B is
// SI (kB = 1e3, KB taken for kB), with iB binary. Values by hand.
TEST_CASE("counts take binary suffixes, byte sizes also SI and binary byte units", "[units]") {
  CHECK(parse_count("128K") == 131072);
  CHECK(parse_count("1T") == int64_t{1} << 40);
  CHECK(parse_count("2t") == int64_t{2} << 40);
  for (const char* bad : {"1MB", "1MiB", "1B", "1Mb", "1.5M", "-1", "1 M", "1e6", "1P"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_count(bad), UserError);
  }
  struct Case {
    const char* text;
    int64_t bytes;
  };
  for (const Case& entry : {Case{"4096", 4096}, Case{"1G", int64_t{1} << 30}, Case{"1GiB", int64_t{1} << 30},
                            Case{"1GB", 1000000000}, Case{"3kB", 3000}, Case{"3KB", 3000}, Case{"3KiB", 3072},
                            Case{"5MB", 5000000}, Case{"5MiB", 5 << 20}, Case{"2TB", 2000000000000},
                            Case{"2TiB", int64_t{2} << 40}, Case{"7B", 7}, Case{"4M", 4 << 20}}) {
    INFO(entry.text);
    CHECK(parse_byte_size(entry.text) == entry.bytes);
  }
  for (const char* bad : {"1Gb", "1gB", "1kiB", "1b", "1PB", "GB", "", "1.5GB"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_byte_size(bad), UserError);
  }
  // 2^63 - 1 fits; 9223372036854775807 kB does not; 9 EB (9e18) fits, 10 EB would not.
  CHECK(parse_byte_size("9223372036854775807") == INT64_MAX);
  CHECK_THROWS_WITH(parse_byte_size("9223372036854775807kB"), Contains("too large"));
  CHECK_THROWS_WITH(parse_count("99999999999999999999999"), Contains("too large"));
  CHECK(parse_byte_size("9000000TB") == int64_t{9000000} * 1000000000000);
  CHECK(format_count(int64_t{3} << 40) == "3T");
  CHECK(format_count(1536) == "1536");
}

TEST_CASE("bandwidths below 1 bit/s or above 1 EB/s are out of range", "[units]") {
  CHECK(bandwidth("1b/s") == 0.125);
  CHECK(bandwidth("1000PB/s") == 1e18);
  for (const char* bad : {"0.5b/s", "1e-300GB/s", "1001PB/s", "1e30GB/s"}) {
    INFO(bad);
    CHECK_THROWS_WITH(bandwidth(bad), StartsWith("--bandwidth: ") && Contains("out of range"));
  }
}
