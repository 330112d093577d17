#include "inventory/topology.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <stdexcept>
#include <tuple>
#include <utility>

namespace pathbench {
namespace {

// CSI sequences ("\x1b[4m", "\x1b[0m"): ESC '[' parameters, then one final byte in 0x40-0x7e.
std::string strip_ansi(std::string_view line) {
  std::string out;
  out.reserve(line.size());
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\x1b' && i + 1 < line.size() && line[i + 1] == '[') {
      std::size_t j = i + 2;
      while (j < line.size() && !(line[j] >= 0x40 && line[j] <= 0x7e)) ++j;
      i = j;  // skips the final byte too (or runs off the end of a truncated sequence)
      continue;
    }
    out.push_back(line[i]);
  }
  return out;
}

std::vector<std::string> split_whitespace(std::string_view line) {
  std::vector<std::string> tokens;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    std::size_t start = i;
    while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i > start) tokens.emplace_back(line.substr(start, i - start));
  }
  return tokens;
}

// "GPU12" -> 12; std::nullopt for anything else.
std::optional<int> gpu_label_index(std::string_view label) {
  constexpr std::string_view kPrefix = "GPU";
  if (label.size() <= kPrefix.size() || label.substr(0, kPrefix.size()) != kPrefix) {
    return std::nullopt;
  }
  std::string_view digits = label.substr(kPrefix.size());
  int value = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc{} || end != digits.data() + digits.size() || value < 0) return std::nullopt;
  return value;
}

// A device column label ends in a digit (GPU0, NIC3, mlx5_0); the affinity headings do not.
bool is_device_label(std::string_view token) {
  return !token.empty() && std::isdigit(static_cast<unsigned char>(token.back())) &&
         std::isalpha(static_cast<unsigned char>(token.front()));
}

// "X", or an upper-case word like "NV18", "PIX", "SYS": what a topology cell can be. Affinity
// text ("0-15", "N/A") is not, so a row that is short of cells is caught.
bool is_topology_cell(std::string_view cell) {
  if (cell.empty() || !std::isupper(static_cast<unsigned char>(cell.front()))) return false;
  return std::all_of(cell.begin(), cell.end(), [](char c) {
    return std::isupper(static_cast<unsigned char>(c)) ||
           std::isdigit(static_cast<unsigned char>(c));
  });
}

[[noreturn]] void reject_line(std::size_t line_number, std::string_view line,
                              const std::string& why) {
  throw std::invalid_argument("nvidia-smi topo -m output line " + std::to_string(line_number) +
                              ": " + why + " in \"" + std::string(line) + "\"");
}

bool is_blank(std::string_view line) {
  return std::all_of(line.begin(), line.end(),
                     [](char c) { return std::isspace(static_cast<unsigned char>(c)); });
}

}  // namespace

std::vector<std::string> nvidia_smi_topo_argv() { return {"nvidia-smi", "topo", "-m"}; }

TopoMatrix parse_nvidia_smi_topo(std::string_view text) {
  std::vector<std::string> lines;
  for (std::size_t start = 0; start <= text.size();) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(strip_ansi(line));
    start = end + 1;
  }

  std::size_t i = 0;
  while (i < lines.size() && is_blank(lines[i])) ++i;
  if (i == lines.size()) throw std::invalid_argument("nvidia-smi topo -m output is empty");

  const std::size_t header_number = i + 1;
  std::vector<std::string> columns;
  for (auto& token : split_whitespace(lines[i])) {
    if (!is_device_label(token)) break;
    columns.push_back(std::move(token));
  }
  if (columns.empty() || !gpu_label_index(columns.front())) {
    reject_line(header_number, lines[i], "expected a header starting with GPU0");
  }
  TopoMatrix topo;
  std::vector<std::size_t> gpu_columns;  // positions of the GPU columns among all columns
  for (std::size_t c = 0; c < columns.size(); ++c) {
    if (std::find(columns.begin(), columns.begin() + c, columns[c]) != columns.begin() + c) {
      reject_line(header_number, lines[i], "column " + columns[c] + " appears twice");
    }
    if (gpu_label_index(columns[c])) {
      gpu_columns.push_back(c);
      topo.gpus.push_back(columns[c]);
    }
  }

  for (++i; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (is_blank(line)) break;  // the legends follow
    const std::size_t line_number = i + 1;
    std::vector<std::string> tokens = split_whitespace(line);
    if (tokens.front().rfind("Legend", 0) == 0) break;
    const std::string& label = tokens.front();
    if (std::find(columns.begin(), columns.end(), label) == columns.end()) {
      reject_line(line_number, line, "row " + label + " is not a column of the header");
    }
    if (!gpu_label_index(label)) continue;  // NIC rows: not GPU pairs
    const std::size_t row = topo.cells.size();
    if (row >= topo.gpus.size() || label != topo.gpus[row]) {
      reject_line(line_number, line,
                  "expected row " +
                      (row < topo.gpus.size() ? topo.gpus[row] : std::string("of a NIC")) +
                      " (rows follow the header's GPU order)");
    }
    if (tokens.size() < 1 + columns.size()) {
      reject_line(line_number, line,
                  "expected " + std::to_string(columns.size()) + " topology cells, found " +
                      std::to_string(tokens.size() - 1) + " fields");
    }
    for (std::size_t c = 0; c < columns.size(); ++c) {
      if (!is_topology_cell(tokens[1 + c])) {
        reject_line(line_number, line,
                    "cell for " + columns[c] + " \"" + tokens[1 + c] + "\" is not a link type");
      }
    }
    std::vector<std::string> cells;
    for (std::size_t c : gpu_columns) cells.push_back(tokens[1 + c]);
    if (cells[row] != "X") {
      reject_line(line_number, line,
                  "self cell of " + label + " is \"" + cells[row] + "\", expected \"X\"");
    }
    topo.cells.push_back(std::move(cells));
  }
  if (topo.cells.size() != topo.gpus.size()) {
    reject_line(header_number, lines[header_number - 1],
                "header lists " + std::to_string(topo.gpus.size()) + " GPUs but " +
                    std::to_string(topo.cells.size()) + " GPU rows follow");
  }
  return topo;
}

LinkType link_type_from_cell(std::string_view cell, int* nvlinks) {
  if (nvlinks != nullptr) *nvlinks = 0;
  if (cell == "X") return LinkType::kSelf;
  if (cell == "PIX") return LinkType::kPix;
  if (cell == "PXB") return LinkType::kPxb;
  if (cell == "PHB") return LinkType::kPhb;
  if (cell == "NODE") return LinkType::kNode;
  if (cell == "SYS" || cell == "SOC") return LinkType::kSys;
  if (cell.size() > 2 && cell.substr(0, 2) == "NV") {
    std::string_view digits = cell.substr(2);
    int count = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), count);
    if (ec == std::errc{} && end == digits.data() + digits.size() && count > 0) {
      if (nvlinks != nullptr) *nvlinks = count;
      return LinkType::kNvlink;
    }
  }
  return LinkType::kUnknown;
}

std::string link_type_name(LinkType type) {
  switch (type) {
    case LinkType::kNvlink:
      return "nvlink";
    case LinkType::kPix:
      return "pix";
    case LinkType::kPxb:
      return "pxb";
    case LinkType::kPhb:
      return "phb";
    case LinkType::kNode:
      return "node";
    case LinkType::kSys:
      return "sys";
    case LinkType::kSelf:
      return "self";
    case LinkType::kUnknown:
      break;
  }
  return "unknown";
}

std::optional<LinkType> link_type_from_name(std::string_view name) {
  for (LinkType type : {LinkType::kNvlink, LinkType::kPix, LinkType::kPxb, LinkType::kPhb,
                        LinkType::kNode, LinkType::kSys, LinkType::kSelf, LinkType::kUnknown}) {
    if (link_type_name(type) == name) return type;
  }
  return std::nullopt;
}

std::string link_param(LinkType type, int nvlinks, std::optional<bool> peer_access) {
  if (type == LinkType::kNvlink) return "nvlink" + std::to_string(nvlinks);
  if (peer_access) return *peer_access ? "pcie-p2p" : "host-staged";
  return (type == LinkType::kPix || type == LinkType::kPxb) ? "pcie-p2p" : "host-staged";
}

std::vector<GpuLink> build_link_map(const TopoMatrix& topo, const P2PMatrix& p2p) {
  const std::size_t n = topo.gpus.size();
  std::vector<int> index(n);
  for (std::size_t i = 0; i < n; ++i) {
    auto parsed = gpu_label_index(topo.gpus[i]);
    if (!parsed) {
      throw std::invalid_argument("topology GPU label \"" + topo.gpus[i] + "\" is not GPU<n>");
    }
    index[i] = *parsed;
  }
  if (topo.cells.size() != n) {
    throw std::invalid_argument("topology matrix has " + std::to_string(topo.cells.size()) +
                                " rows for " + std::to_string(n) + " GPUs");
  }
  std::vector<GpuLink> links;
  for (std::size_t i = 0; i < n; ++i) {
    if (topo.cells[i].size() != n) {
      throw std::invalid_argument("topology row " + topo.gpus[i] + " has " +
                                  std::to_string(topo.cells[i].size()) + " cells for " +
                                  std::to_string(n) + " GPUs");
    }
    for (std::size_t j = 0; j < n; ++j) {
      if (i == j) continue;
      GpuLink link;
      link.from = index[i];
      link.to = index[j];
      link.type = link_type_from_cell(topo.cells[i][j], &link.nvlinks);
      auto peer = std::find_if(p2p.begin(), p2p.end(), [&](const PeerInfo& p) {
        return p.from == link.from && p.to == link.to;
      });
      if (peer != p2p.end()) {
        link.peer_access = peer->access_supported;
        link.performance_rank = peer->performance_rank;
        link.native_atomics = peer->native_atomics;
      }
      link.param = link_param(link.type, link.nvlinks, link.peer_access);
      links.push_back(std::move(link));
    }
  }
  std::sort(links.begin(), links.end(), [](const GpuLink& a, const GpuLink& b) {
    return std::tie(a.from, a.to) < std::tie(b.from, b.to);
  });
  return links;
}

}  // namespace pathbench
